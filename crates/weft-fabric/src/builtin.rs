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

/// `sum@1.0.0` (client streaming): adds up the `value`s the caller streams; completes with
/// `{"sum": total, "count": n}` after the caller half-closes.
pub struct Sum {
    descriptor: Descriptor,
}

/// `upper@1.0.0` (bidirectional): answers each `{"text"}` chunk with its upper-case form as
/// it arrives, and completes with `{"chunks": n}` after the caller half-closes.
pub struct Upper {
    descriptor: Descriptor,
}

fn streaming_descriptor(value: Value) -> Result<Descriptor, weft_contract::DescriptorErrors> {
    Descriptor::from_value(&value, &Limits::default())
}

impl Sum {
    /// The sum provider.
    pub fn new() -> Result<Self, weft_contract::DescriptorErrors> {
        Ok(Self {
            descriptor: streaming_descriptor(json!({
                "id": "sum", "version": "1.0.0", "title": "Sum",
                "description": "Add up the numbers the caller streams as chunks {\"value\": number}; after the caller half-closes, complete with {\"sum\": total, \"count\": chunks}.",
                "io_mode": "client_streaming",
                "input_schema": {"type": "object", "additionalProperties": false},
                "input_chunk_schema": {"type": "object", "required": ["value"], "additionalProperties": false,
                    "properties": {"value": {"type": "number"}}},
                "output_schema": {"type": "object", "required": ["sum", "count"],
                    "properties": {"sum": {"type": "number"}, "count": {"type": "integer"}}}
            }))?,
        })
    }
}

impl Upper {
    /// The upper-case provider.
    pub fn new() -> Result<Self, weft_contract::DescriptorErrors> {
        let text = json!({"type": "object", "required": ["text"], "additionalProperties": false,
                          "properties": {"text": {"type": "string"}}});
        Ok(Self {
            descriptor: streaming_descriptor(json!({
                "id": "upper", "version": "1.0.0", "title": "Uppercase",
                "description": "Answer each streamed chunk {\"text\": string} with its upper-case form as it arrives; after the caller half-closes, complete with {\"chunks\": n}.",
                "io_mode": "bidirectional",
                "input_schema": {"type": "object", "additionalProperties": false},
                "input_chunk_schema": text,
                "output_chunk_schema": text,
                "output_schema": {"type": "object", "required": ["chunks"], "properties": {"chunks": {"type": "integer"}}}
            }))?,
        })
    }
}

fn no_unary<'a>(what: &'static str) -> BoxFuture<'a, Result<Value, ProviderError>> {
    async move {
        Err(ProviderError::Failed(format!(
            "{what} streams; it has no unary form"
        )))
    }
    .boxed()
}

impl Provider for Sum {
    fn descriptors(&self) -> Vec<Descriptor> {
        vec![self.descriptor.clone()]
    }
    fn call<'a>(
        &'a self,
        _: &'a CallContext,
        _: Value,
    ) -> BoxFuture<'a, Result<Value, ProviderError>> {
        no_unary("sum")
    }
    fn stream<'a>(
        &'a self,
        _context: &'a CallContext,
        _payload: Value,
        input: Option<ChunkSource>,
        _output: ChunkSink,
    ) -> BoxFuture<'a, Result<Option<Value>, ProviderError>> {
        async move {
            let mut input =
                input.ok_or_else(|| ProviderError::Failed("sum needs caller chunks".into()))?;
            let (mut total, mut count) = (0.0_f64, 0_u64);
            while let Some(chunk) = input.next().await {
                total += chunk["value"].as_f64().unwrap_or(0.0);
                count += 1;
            }
            Ok(Some(json!({ "sum": total, "count": count })))
        }
        .boxed()
    }
}

impl Provider for Upper {
    fn descriptors(&self) -> Vec<Descriptor> {
        vec![self.descriptor.clone()]
    }
    fn call<'a>(
        &'a self,
        _: &'a CallContext,
        _: Value,
    ) -> BoxFuture<'a, Result<Value, ProviderError>> {
        no_unary("upper")
    }
    fn stream<'a>(
        &'a self,
        _context: &'a CallContext,
        _payload: Value,
        input: Option<ChunkSource>,
        output: ChunkSink,
    ) -> BoxFuture<'a, Result<Option<Value>, ProviderError>> {
        async move {
            let mut input =
                input.ok_or_else(|| ProviderError::Failed("upper needs caller chunks".into()))?;
            let mut chunks = 0_u64;
            while let Some(chunk) = input.next().await {
                let text = chunk["text"].as_str().unwrap_or("").to_uppercase();
                output
                    .send(json!({ "text": text }))
                    .await
                    .map_err(|_| ProviderError::Failed("the stream closed".into()))?;
                chunks += 1;
            }
            Ok(Some(json!({ "chunks": chunks })))
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
    /// `sum@1.0.0`.
    pub sum: Sum,
    /// `upper@1.0.0`.
    pub upper: Upper,
}

impl Builtins {
    /// Every built-in.
    pub fn new() -> Result<Self, weft_contract::DescriptorErrors> {
        Ok(Self {
            echo: Echo::new()?,
            count: Count::new()?,
            sum: Sum::new()?,
            upper: Upper::new()?,
        })
    }
}

impl Provider for Builtins {
    fn descriptors(&self) -> Vec<Descriptor> {
        let mut all = self.echo.descriptors();
        all.extend(self.count.descriptors());
        all.extend(self.sum.descriptors());
        all.extend(self.upper.descriptors());
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
            "sum" => self.sum.stream(context, payload, input, output),
            "upper" => self.upper.stream(context, payload, input, output),
            _ => self.echo.stream(context, payload, input, output),
        }
    }
}
