//! `embed.text.{model}` and `embed.image.{model}`: length(vector) = dim, and the declared dim
//! is the model's when the model is one weft knows.

use crate::ctx::Ctx;
use crate::error::VerifyError;
use crate::fields::{self, Kind};
use crate::report::{Check, Checks};

/// Output dimensions of the embedding models the seed names. Any other `{model}` is open:
/// its `dim_matches_model` check passes as "not applicable: unknown model".
pub(crate) const KNOWN_MODELS: [(&str, i64); 4] = [
    ("text-embedding-3-small", 1536),
    ("text-embedding-3-large", 3072),
    ("clip-vit-l-14", 768),
    ("siglip-base", 768),
];

/// `embed.text.{model}`.
pub(crate) fn text(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    ctx.input_str("text")?;
    embedding(ctx)
}

/// `embed.image.{model}`.
pub(crate) fn image(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    ctx.input_str("image_b64")?;
    embedding(ctx)
}

fn embedding(ctx: &Ctx<'_>) -> Result<Vec<Check>, VerifyError> {
    let model = ctx.binding("model")?;
    if model.is_empty() {
        return Err(ctx.invalid_binding("model", "must not be empty"));
    }
    let output = ctx.output;
    let mut checks = Checks::new();
    checks.add(
        "output_shape",
        fields::shape(
            output,
            &[("/vector", Kind::NumArr, true), ("/dim", Kind::Int, true)],
        ),
    );
    let dim = fields::integer(output, "/dim");
    checks.add(
        "vector_length_matches_dim",
        dim.clone().and_then(|dim| {
            let vector = fields::array(output, "/vector")?;
            if let Some(index) = vector.iter().position(|value| !value.is_number()) {
                return Err(format!("/vector/{index} is not a number"));
            }
            if dim < 1 {
                Err(format!("dim {dim} is not positive"))
            } else if vector.len() as i64 == dim {
                Ok(format!("{} numbers = dim {dim}", vector.len()))
            } else {
                Err(format!("{} numbers, declared dim {dim}", vector.len()))
            }
        }),
    );
    checks.add(
        "dim_matches_model",
        match KNOWN_MODELS.iter().find(|(name, _)| *name == model) {
            None => Ok(format!(
                "not applicable: unknown model `{model}`, no known dimension"
            )),
            Some((_, known)) => dim.and_then(|dim| {
                if dim == *known {
                    Ok(format!("{model} has {known} dimensions"))
                } else {
                    Err(format!("declared dim {dim}, {model} has {known}"))
                }
            }),
        },
    );
    Ok(checks.finish())
}
