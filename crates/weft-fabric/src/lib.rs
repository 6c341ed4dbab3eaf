//! The call path of a weft node: a caller pins `id@version` plus revision, and the fabric
//! carries the call to a provider — checking the envelope, looking the contract up, holding
//! the pin, admitting without queueing, keeping one deadline, validating the payload before
//! and the result after, and answering every failure with a typed [`CallError`].
//!
//! It knows the registry (for lookups) and the provider SDK (for handles), not HTTP: the
//! server maps [`CallError::code`] onto statuses.

pub mod builtin;
pub mod diagnostics;
pub mod error;
pub mod fabric;
pub mod frame;
pub mod response;
pub mod stream;

pub use diagnostics::{Diagnostics, StreamEnd, StreamProbe};
pub use error::CallError;
pub use fabric::{CallRequest, Fabric, FabricOptions};
pub use frame::CallerFrame;
pub use response::CallResponse;
pub use stream::{
    Direction, Frame, FrameError, FrameKind, Frames, InputHandle, Stopper, StreamCall,
};
