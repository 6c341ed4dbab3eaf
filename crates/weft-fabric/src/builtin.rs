//! Built-in demo providers, served by `weft serve` unless disabled.

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use weft_contract::{Descriptor, Limits};
use weft_provider::{CallContext, Provider, ProviderError};

/// The provider id built-ins are registered under.
pub const BUILTIN_PROVIDER: &str = "builtin";

/// `echo@1.0.0`: returns `{"text": …}` unchanged — the seed's example capability.
pub struct Echo {
    descriptor: Descriptor,
}

impl Echo {
    /// The echo provider.
    pub fn new() -> Result<Self, weft_contract::DescriptorErrors> {
        let text = json!({"type": "object", "properties": {"text": {"type": "string"}},
                          "required": ["text"], "additionalProperties": false});
        let descriptor = Descriptor::from_value(
            &json!({
                "id": "echo",
                "version": "1.0.0",
                "title": "Echo",
                "description": "Return the supplied text unchanged. Input: {\"text\": string}. Output: the same object. Useful to check a node end to end.",
                "io_mode": "unary",
                "input_schema": text,
                "output_schema": text,
                "annotations": {"latency": "interactive"}
            }),
            &Limits::default(),
        )?;
        Ok(Self { descriptor })
    }
}

impl Provider for Echo {
    fn descriptors(&self) -> Vec<Descriptor> {
        vec![self.descriptor.clone()]
    }

    fn call<'a>(
        &'a self,
        _context: &'a CallContext,
        payload: Value,
    ) -> BoxFuture<'a, Result<Value, ProviderError>> {
        async move { Ok(payload) }.boxed()
    }
}
