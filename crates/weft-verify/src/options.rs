//! Limits and knobs of verification, each explicit and documented.
//!
//! Every limit bounds work or memory under hostile output (a PNG header claiming
//! 100000×100000 pixels is refused before any pixel buffer is allocated). Every tolerance is
//! stated here and in `docs/verification.md`. The defaults are what [`VerifyOptions::default`]
//! returns.

/// Limits and tolerances for [`crate::verify`].
#[derive(Debug, Clone, PartialEq)]
pub struct VerifyOptions {
    /// Longest base64 text decoded for any image or audio field, in bytes of text
    /// (default 16 MiB: a 10 MB PNG encodes to ~13.4 MB). Longer fails the check unread.
    pub max_base64_bytes: usize,
    /// Most pixels (width × height) a PNG may declare before it is decoded (default
    /// 16 777 216 = 4096 × 4096). Checked on the header, before allocation.
    pub max_image_pixels: u64,
    /// Largest decoded MP3, in bytes (default 16 MiB).
    pub max_audio_bytes: usize,
    /// Largest SVG document parsed, in bytes (default 8 MiB).
    pub max_svg_bytes: usize,
    /// Largest source text handed to a parser for `code.*` rows, in bytes (default 1 MiB).
    pub max_code_bytes: usize,
    /// Deepest JSON nesting a verifier walks into (GeoJSON, default 64).
    pub max_json_depth: usize,
    /// How far `sum(confidence)` may be from 1.0 for `classify.*` rows (default 0.01, so
    /// 0.99 ≤ sum ≤ 1.01 passes).
    pub confidence_sum_tolerance: f64,
    /// How far an MP3's declared `duration_ms` may be from the decoded duration (default 100 ms,
    /// about four MPEG frames of encoder delay and padding).
    pub mp3_duration_tolerance_ms: u64,
    /// Slack over the effective timeout for `code.execute.sandboxed` (default 500 ms). A
    /// `duration_ms` above timeout + grace fails; an exit code 124 below timeout − grace fails.
    pub sandbox_grace_ms: u64,
    /// Oldest a `data.lookup.stock-price` `timestamp` may be, in seconds before now
    /// (default 345 600 = 4 days: covers a long weekend during which the last trade is the
    /// latest quote).
    pub stock_max_age_secs: i64,
    /// How far in the future a timestamp may be (clock skew, default 300 s).
    pub max_clock_skew_secs: i64,
    /// The clock, as Unix seconds; `None` reads the system clock. Injectable for tests.
    pub now_unix_secs: Option<i64>,
    /// Fewest letters a text must have before its language is detected (default 20). Shorter
    /// text fails the language check as "too short to detect", never passes it.
    pub min_language_letters: usize,
    /// Lowest detector confidence, in [0, 1], for the detected language to count (default
    /// 0.15). A lower confidence fails the check with the detector's guess in the detail.
    /// whatlang gives 1.0 to a full sentence and 0.27–0.64 to a correct five-word Romance
    /// sentence; a wrong top guess fails whatever its confidence.
    pub min_language_confidence: f64,
    /// Bytes of a text handed to the language detector (default 16 KiB, cut on a character
    /// boundary): the detector's work is bounded on long outputs.
    pub max_language_sample_bytes: usize,
    /// Relative tolerance for recomputed numbers (`compute.statistics.*`, and
    /// `compute.math.numeric` without `precision`): |got − want| ≤ tol × max(1, |want|)
    /// (default 1e-9).
    pub numeric_relative_tolerance: f64,
    /// Use the sample (n − 1) instead of the population (n) denominator for
    /// `compute.statistics.variance` and `stddev` (default false: population).
    pub sample_variance: bool,
    /// Provenance sources accepted for `research.*` outputs besides the built-in list
    /// (`docs/verification.md`). Compared case-insensitively.
    pub extra_research_sources: Vec<String>,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            max_base64_bytes: 16 * 1024 * 1024,
            max_image_pixels: 4096 * 4096,
            max_audio_bytes: 16 * 1024 * 1024,
            max_svg_bytes: 8 * 1024 * 1024,
            max_code_bytes: 1024 * 1024,
            max_json_depth: 64,
            confidence_sum_tolerance: 0.01,
            mp3_duration_tolerance_ms: 100,
            sandbox_grace_ms: 500,
            stock_max_age_secs: 4 * 24 * 3600,
            max_clock_skew_secs: 300,
            now_unix_secs: None,
            min_language_letters: 20,
            min_language_confidence: 0.15,
            max_language_sample_bytes: 16 * 1024,
            numeric_relative_tolerance: 1e-9,
            sample_variance: false,
            extra_research_sources: Vec::new(),
        }
    }
}

impl VerifyOptions {
    /// The current time in Unix seconds: the injected clock or the system's.
    pub fn now(&self) -> i64 {
        self.now_unix_secs.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|elapsed| i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX))
                .unwrap_or(0)
        })
    }
}
