//! Process I/O of one child run: spawning, the stdin writer, the stdout line reader (with
//! the line limit enforced before anything is parsed) and the stderr log forwarder.

use std::process::Stdio;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::config::ManagedConfig;

/// Longest stderr line forwarded to the log; the rest of a longer line is dropped.
const MAX_STDERR_LINE: usize = 64 * 1024;
/// Lines read ahead of the supervisor.
const INCOMING_QUEUE: usize = 64;

/// What the stdout reader saw.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// One complete line, without its `\n`.
    Line(Vec<u8>),
    /// A line longer than the limit (the reader stops).
    TooLong,
    /// Stdout ended in the middle of a line (the reader stops).
    Partial,
    /// Stdout ended cleanly (the reader stops).
    Eof,
    /// Reading failed (the reader stops).
    Io(String),
}

/// What the stdin writer is asked to do.
#[derive(Debug)]
pub(crate) enum Outgoing {
    /// Write this newline-terminated line.
    Line(String),
    /// Close stdin (end of input: the child should finish and exit).
    Close,
}

/// A running child and the tasks around its pipes.
pub(crate) struct ChildProcess {
    /// The process (killed on drop).
    pub child: Child,
    /// Lines from stdout, in order.
    pub incoming: mpsc::Receiver<Incoming>,
    /// Lines for stdin.
    pub outgoing: mpsc::UnboundedSender<Outgoing>,
    /// The writer: `Err` when writing to stdin failed.
    pub writer: Option<JoinHandle<Result<(), String>>>,
    reader: JoinHandle<()>,
}

impl ChildProcess {
    /// Stops the reader and writer tasks (the stderr forwarder ends on its own at EOF).
    pub fn stop_io(&mut self) {
        self.reader.abort();
        if let Some(writer) = self.writer.take() {
            writer.abort();
        }
    }
}

/// Spawns the configured command with piped stdio and starts its I/O tasks.
pub(crate) fn spawn(config: &ManagedConfig) -> Result<ChildProcess, String> {
    let (program, args) = config
        .command
        .split_first()
        .ok_or_else(|| "the command is empty".to_owned())?;
    let mut command = Command::new(program);
    command
        .args(args)
        .envs(config.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(cwd) = &config.cwd {
        command.current_dir(cwd);
    }
    // Its own process group: a Ctrl-C at the node's terminal reaches the node, which
    // then stops its children in order, instead of killing them all at once.
    #[cfg(unix)]
    command.process_group(0);
    let mut child = command.spawn().map_err(|e| format!("{program:?}: {e}"))?;
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err("the child's stdio pipes are missing".into());
    };
    let (out_tx, out_rx) = mpsc::unbounded_channel();
    let (in_tx, in_rx) = mpsc::channel(INCOMING_QUEUE);
    let writer = tokio::spawn(write_lines(stdin, out_rx));
    let reader = tokio::spawn(read_lines(stdout, config.max_line_bytes, in_tx));
    tokio::spawn(forward_stderr(stderr, config.id.clone()));
    Ok(ChildProcess {
        child,
        incoming: in_rx,
        outgoing: out_tx,
        writer: Some(writer),
        reader,
    })
}

async fn write_lines(
    mut stdin: ChildStdin,
    mut lines: mpsc::UnboundedReceiver<Outgoing>,
) -> Result<(), String> {
    while let Some(message) = lines.recv().await {
        match message {
            Outgoing::Line(line) => {
                stdin
                    .write_all(line.as_bytes())
                    .await
                    .map_err(|e| format!("writing to the child's stdin failed: {e}"))?;
                stdin
                    .flush()
                    .await
                    .map_err(|e| format!("writing to the child's stdin failed: {e}"))?;
            }
            Outgoing::Close => break,
        }
    }
    // Dropping stdin closes the pipe: the child reads end of input.
    Ok(())
}

async fn read_lines(stdout: ChildStdout, max: usize, events: mpsc::Sender<Incoming>) {
    let mut reader = BufReader::new(stdout);
    loop {
        let mut line = Vec::new();
        let event = match read_line(&mut reader, max, &mut line).await {
            Ok(LineRead::Complete) => Incoming::Line(line),
            Ok(LineRead::TooLong) => Incoming::TooLong,
            Ok(LineRead::Partial) => Incoming::Partial,
            Ok(LineRead::Eof) => Incoming::Eof,
            Err(e) => Incoming::Io(e.to_string()),
        };
        let last = !matches!(event, Incoming::Line(_));
        if events.send(event).await.is_err() || last {
            return;
        }
    }
}

async fn forward_stderr(stderr: ChildStderr, provider: String) {
    let mut reader = BufReader::new(stderr);
    loop {
        let mut line = Vec::new();
        let outcome = match read_line(&mut reader, MAX_STDERR_LINE, &mut line).await {
            Ok(outcome) => outcome,
            Err(_) => return,
        };
        if !line.is_empty() || outcome == LineRead::Complete {
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_end_matches('\r');
            if outcome == LineRead::TooLong {
                tracing::info!(provider = %provider, "child: {text} …(truncated)");
            } else {
                tracing::info!(provider = %provider, "child: {text}");
            }
        }
        match outcome {
            LineRead::Complete => {}
            LineRead::TooLong => {
                if skip_line(&mut reader).await.is_err() {
                    return;
                }
            }
            LineRead::Partial | LineRead::Eof => return,
        }
    }
}

/// How [`read_line`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineRead {
    /// A full line is in the buffer (without `\n`).
    Complete,
    /// The line exceeds the limit; the buffer holds its first `max` bytes and the reader
    /// is positioned inside the line.
    TooLong,
    /// End of input after a partial line (in the buffer).
    Partial,
    /// End of input at a line boundary.
    Eof,
}

/// Reads one `\n`-terminated line into `buf`, never buffering more than `max` bytes.
pub(crate) async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    max: usize,
    buf: &mut Vec<u8>,
) -> std::io::Result<LineRead> {
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if buf.is_empty() {
                LineRead::Eof
            } else {
                LineRead::Partial
            });
        }
        let (take, complete) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (at, true),
            None => (available.len(), false),
        };
        let room = max.saturating_sub(buf.len());
        if take > room {
            buf.extend_from_slice(&available[..room]);
            reader.consume(room);
            return Ok(LineRead::TooLong);
        }
        buf.extend_from_slice(&available[..take]);
        reader.consume(if complete { take + 1 } else { take });
        if complete {
            return Ok(LineRead::Complete);
        }
    }
}

/// Discards input up to and including the next `\n` (or to end of input).
async fn skip_line<R: AsyncBufRead + Unpin>(reader: &mut R) -> std::io::Result<()> {
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(());
        }
        match available.iter().position(|&b| b == b'\n') {
            Some(at) => {
                reader.consume(at + 1);
                return Ok(());
            }
            None => {
                let n = available.len();
                reader.consume(n);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    async fn lines(input: &[u8], max: usize) -> Vec<(LineRead, Vec<u8>)> {
        // A tiny buffer so lines straddle several fills.
        let mut reader = BufReader::with_capacity(3, input);
        let mut out = Vec::new();
        loop {
            let mut buf = Vec::new();
            let r = read_line(&mut reader, max, &mut buf).await.unwrap();
            out.push((r, buf));
            if r != LineRead::Complete {
                return out;
            }
        }
    }

    #[tokio::test]
    async fn lines_within_the_limit_are_read_whole() {
        let got = lines(b"abcd\n\nxyz\n", 4).await;
        let expected: Vec<(LineRead, Vec<u8>)> = vec![
            (LineRead::Complete, b"abcd".to_vec()),
            (LineRead::Complete, b"".to_vec()),
            (LineRead::Complete, b"xyz".to_vec()),
            (LineRead::Eof, b"".to_vec()),
        ];
        assert_eq!(got, expected);
    }

    #[tokio::test]
    async fn an_over_long_line_stops_at_the_limit() {
        let got = lines(b"ok\nabcdefgh\n", 5).await;
        assert_eq!(got[1], (LineRead::TooLong, b"abcde".to_vec()));
        let got = lines(b"abc", 5).await;
        assert_eq!(got[0], (LineRead::Partial, b"abc".to_vec()));
    }

    #[tokio::test]
    async fn skip_line_resumes_after_the_newline() {
        let mut reader = BufReader::with_capacity(2, &b"abcdefg\nnext\n"[..]);
        let mut buf = Vec::new();
        assert_eq!(
            read_line(&mut reader, 3, &mut buf).await.unwrap(),
            LineRead::TooLong
        );
        skip_line(&mut reader).await.unwrap();
        buf.clear();
        assert_eq!(
            read_line(&mut reader, 10, &mut buf).await.unwrap(),
            LineRead::Complete
        );
        assert_eq!(buf, b"next");
    }
}
