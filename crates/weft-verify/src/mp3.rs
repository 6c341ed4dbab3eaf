//! MP3 decoding with `symphonia` (only its MP3 decoder is compiled in): the whole stream is
//! decoded, so the duration is measured from the audio itself, not from a header that could
//! lie. Work is bounded by [`crate::VerifyOptions::max_audio_bytes`].

use std::io::Cursor;

use symphonia::core::codecs::{CODEC_TYPE_MP3, DecoderOptions};
use symphonia::core::errors::Error as AudioError;
use symphonia::core::formats::FormatOptions;
use symphonia::core::io::MediaSourceStream;
use symphonia::core::meta::MetadataOptions;
use symphonia::core::probe::Hint;

/// What decoding an MP3 measured.
pub(crate) struct Mp3Audio {
    /// Decoded duration in milliseconds.
    pub duration_ms: f64,
    /// MPEG frames decoded.
    pub packets: u64,
    /// Sample rate in Hz.
    pub sample_rate: u32,
}

/// Decodes every frame of `bytes` as MP3 and measures the duration.
pub(crate) fn decode(bytes: Vec<u8>, max_bytes: usize) -> Result<Mp3Audio, String> {
    if bytes.len() > max_bytes {
        return Err(format!(
            "audio is {} bytes, over the limit of {max_bytes}",
            bytes.len()
        ));
    }
    let source = MediaSourceStream::new(Box::new(Cursor::new(bytes)), Default::default());
    let mut hint = Hint::new();
    hint.with_extension("mp3").mime_type("audio/mpeg");
    let probed = symphonia::default::get_probe()
        .format(
            &hint,
            source,
            &FormatOptions::default(),
            &MetadataOptions::default(),
        )
        .map_err(|error| format!("not an MP3 stream: {error}"))?;
    let mut format = probed.format;
    let track = format
        .default_track()
        .ok_or_else(|| "MP3 stream has no audio track".to_owned())?;
    if track.codec_params.codec != CODEC_TYPE_MP3 {
        return Err("stream is MPEG audio but not Layer III (MP3)".to_owned());
    }
    let sample_rate = track
        .codec_params
        .sample_rate
        .ok_or_else(|| "MP3 stream declares no sample rate".to_owned())?;
    let track_id = track.id;
    let mut decoder = symphonia::default::get_codecs()
        .make(&track.codec_params, &DecoderOptions::default())
        .map_err(|error| format!("no MP3 decoder for this stream: {error}"))?;
    let mut frames: u64 = 0;
    let mut packets: u64 = 0;
    loop {
        let packet = match format.next_packet() {
            Ok(packet) => packet,
            Err(AudioError::IoError(error))
                if error.kind() == std::io::ErrorKind::UnexpectedEof =>
            {
                break;
            }
            Err(error) => {
                return Err(format!(
                    "MP3 stream is corrupt after {packets} frames: {error}"
                ));
            }
        };
        if packet.track_id() != track_id {
            continue;
        }
        let decoded = decoder
            .decode(&packet)
            .map_err(|error| format!("MP3 frame {packets} does not decode: {error}"))?;
        frames += decoded.frames() as u64;
        packets += 1;
    }
    if packets == 0 {
        return Err("MP3 stream has no decodable frame".to_owned());
    }
    Ok(Mp3Audio {
        duration_ms: frames as f64 * 1000.0 / f64::from(sample_rate),
        packets,
        sample_rate,
    })
}
