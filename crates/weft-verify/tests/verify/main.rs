//! Every row of the taxonomy against outputs the tests build themselves: for each row at least
//! one passing output and failing outputs that between them fail every individual check.
//! One test binary (modules per domain) keeps link time down.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod audio;
mod code;
mod compute;
mod data;
mod errors;
mod hostile;
mod image;
mod labels;
mod support;
mod text;
