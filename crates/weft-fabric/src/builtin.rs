//! Built-in demo providers, served by `weft serve` unless disabled.

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use weft_contract::{Descriptor, Limits};
use weft_provider::{CallContext, ChunkSink, ChunkSource, Provider, ProviderError};

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

/// `count@1.0.0` (server streaming): streams `{"n": 1}` … `{"n": to}`, optionally
/// `delay_ms` apart, then completes with `{"count": to}`.
pub struct Count {
    descriptor: Descriptor,
}

impl Count {
    /// The count provider.
    pub fn new() -> Result<Self, weft_contract::DescriptorErrors> {
        let descriptor = Descriptor::from_value(
            &json!({
                "id": "count",
                "version": "1.0.0",
                "title": "Count",
                "description": "Stream the integers from 1 to `to` (at most 1000), one chunk {\"n\": integer} each, `delay_ms` (0-1000, default 0) apart; the stream completes with {\"count\": to}. Useful to try streaming, flow control and cancellation.",
                "io_mode": "server_streaming",
                "input_schema": {"type": "object", "required": ["to"], "additionalProperties": false,
                    "properties": {"to": {"type": "integer", "minimum": 1, "maximum": 1000},
                                   "delay_ms": {"type": "integer", "minimum": 0, "maximum": 1000}}},
                "output_chunk_schema": {"type": "object", "required": ["n"], "additionalProperties": false,
                    "properties": {"n": {"type": "integer"}}},
                "output_schema": {"type": "object", "required": ["count"],
                    "properties": {"count": {"type": "integer"}}}
            }),
            &Limits::default(),
        )?;
        Ok(Self { descriptor })
    }
}

impl Provider for Count {
    fn descriptors(&self) -> Vec<Descriptor> {
        vec![self.descriptor.clone()]
    }

    fn call<'a>(
        &'a self,
        _context: &'a CallContext,
        _payload: Value,
    ) -> BoxFuture<'a, Result<Value, ProviderError>> {
        async {
            Err(ProviderError::Failed(
                "count streams; it has no unary form".into(),
            ))
        }
        .boxed()
    }

    fn stream<'a>(
        &'a self,
        _context: &'a CallContext,
        payload: Value,
        _input: Option<ChunkSource>,
        output: ChunkSink,
    ) -> BoxFuture<'a, Result<Option<Value>, ProviderError>> {
        async move {
            let to = payload["to"].as_u64().unwrap_or(0);
            let delay = std::time::Duration::from_millis(payload["delay_ms"].as_u64().unwrap_or(0));
            for n in 1..=to {
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                output
                    .send(json!({ "n": n }))
                    .await
                    .map_err(|_| ProviderError::Failed("the stream closed".into()))?;
            }
            Ok(Some(json!({ "count": to })))
        }
        .boxed()
    }
}

/// The built-in providers served as one provider (`builtin`), dispatching by capability id.
pub struct Builtins {
    /// `echo@1.0.0`.
    pub echo: Echo,
    /// `count@1.0.0`.
    pub count: Count,
}

impl Provider for Builtins {
    fn descriptors(&self) -> Vec<Descriptor> {
        let mut all = self.echo.descriptors();
        all.extend(self.count.descriptors());
        all
    }

    fn call<'a>(
        &'a self,
        context: &'a CallContext,
        payload: Value,
    ) -> BoxFuture<'a, Result<Value, ProviderError>> {
        match context.capability.id.as_str() {
            "echo" => self.echo.call(context, payload),
            _ => self.count.call(context, payload),
        }
    }

    fn stream<'a>(
        &'a self,
        context: &'a CallContext,
        payload: Value,
        input: Option<ChunkSource>,
        output: ChunkSink,
    ) -> BoxFuture<'a, Result<Option<Value>, ProviderError>> {
        match context.capability.id.as_str() {
            "count" => self.count.stream(context, payload, input, output),
            _ => self.echo.stream(context, payload, input, output),
        }
    }
}
