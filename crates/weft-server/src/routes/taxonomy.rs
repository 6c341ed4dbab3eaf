//! The standard capability taxonomy: its rows, and what one id is.

use axum::Json;
use axum::extract::Extension;
use serde::Serialize;
use serde_json::json;
use serde_json::value::RawValue;
use utoipa::ToSchema;
use weft_contract::DescriptorErrors;
use weft_registry::{Principal, Scope};
use weft_taxonomy::view::{ClassificationView, ReasonView, RowView};
use weft_taxonomy::{DOMAINS, Resolution, SPEC, TAXONOMY_VERSION, resolve, rows};

use super::capabilities::{decode_feature_cursor, encode_feature_cursor};
use super::{ApiResult, DescriptorDoc};
use crate::error::ApiError;
use crate::extract::{Path, QueryParams};
use crate::layers::require;

/// A page of taxonomy rows, in the seed's order.
#[derive(Debug, Serialize, ToSchema)]
pub struct TaxonomyList {
    /// The taxonomy's version (every standard descriptor's `version`).
    pub taxonomy_version: String,
    /// The specification it transcribes.
    pub spec: String,
    /// Every standard domain (some, like `exec`, have no rows).
    pub domains: Vec<String>,
    /// The rows of this page.
    pub rows: Vec<RowView>,
    /// Cursor for the next page.
    #[serde(rename = "nextCursor")]
    pub next_cursor: Option<String>,
    /// Whether there is a next page.
    #[serde(rename = "hasMore")]
    pub has_more: bool,
}

/// What one id is to the taxonomy, with its standard descriptor when it is standard.
#[derive(Debug, Serialize, ToSchema)]
pub struct TaxonomyEntry {
    /// The id asked about.
    pub id: String,
    /// The taxonomy's version.
    pub taxonomy_version: String,
    /// `standard` (row and bindings) or `custom` (provider and capability).
    pub classification: ClassificationView,
    /// The verification rule, for a standard id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verification: Option<String>,
    /// The standard descriptor, for a standard id (custom ids have none).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<DescriptorDoc>)]
    pub descriptor: Option<Box<RawValue>>,
}

/// List the rows of the standard capability taxonomy (docs/taxonomy.md).
#[utoipa::path(get, path = "/v1/taxonomy", tag = "taxonomy",
    params(("domain" = Option<String>, Query, description = "only this standard domain: image, audio, text, code, data, chart, compute, exec, embed, classify, research"),
           ("limit" = Option<usize>, Query, description = "1-100, default 25"),
           ("cursor" = Option<String>, Query, description = "from nextCursor")),
    responses((status = 200, body = TaxonomyList),
              (status = 400, body = crate::error::ErrorEnvelope, description = "unknown domain, bad limit or cursor, unknown parameter"),
              (status = 401, body = crate::error::ErrorEnvelope), (status = 403, body = crate::error::ErrorEnvelope)),
    security(("bearerAuth" = [])))]
pub async fn list_taxonomy(
    Extension(principal): Extension<Principal>,
    query: QueryParams,
) -> ApiResult<Json<TaxonomyList>> {
    require(&principal, Scope::Read)?;
    query.only(&["domain", "limit", "cursor"])?;
    let (limit, cursor) = query.page()?;
    let domain = match query.get("domain") {
        None => None,
        Some(d) if DOMAINS.contains(&d) => Some(d),
        Some(other) => {
            return Err(ApiError::invalid(format!(
                "domain {other:?} is not a standard domain; one of {}",
                DOMAINS.join(", ")
            )));
        }
    };
    let mut list = full_list(domain);
    // The cursor is the last pattern of the previous page; rows keep the seed's order.
    let start = match cursor {
        None => 0,
        Some(c) => {
            let after = decode_feature_cursor(c)
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .and_then(|pattern| list.rows.iter().position(|r| r.pattern == pattern))
                .ok_or_else(|| ApiError::invalid("cursor is not one this server issued"))?;
            after + 1
        }
    };
    let total = list.rows.len();
    list.rows = list.rows.into_iter().skip(start).take(limit).collect();
    list.has_more = start + list.rows.len() < total;
    list.next_cursor = list
        .has_more
        .then(|| {
            list.rows
                .last()
                .map(|r| encode_feature_cursor(r.pattern.as_bytes()))
        })
        .flatten();
    Ok(Json(list))
}

/// What one capability id is to the taxonomy: a standard id with its row, bindings,
/// verification rule and standard descriptor, or a custom id.
///
/// An id that breaks the grammar is 400 `invalid_request`; a well-formed id that names no
/// row (unknown domain or action, a placeholder value outside its set, …) is 404
/// `not_found`. Both carry `details: {id, reason: {code, message, segment?, malformed}}`.
#[utoipa::path(get, path = "/v1/taxonomy/{capabilityId}", tag = "taxonomy",
    params(("capabilityId" = String, Path, description = "a concrete id, like audio.transcribe.en.text")),
    responses((status = 200, body = TaxonomyEntry),
              (status = 400, body = crate::error::ErrorEnvelope, description = "the id breaks the taxonomy grammar, or a path parameter that cannot be decoded"),
              (status = 404, body = crate::error::ErrorEnvelope, description = "a well-formed id that is not in the taxonomy"),
              (status = 401, body = crate::error::ErrorEnvelope), (status = 403, body = crate::error::ErrorEnvelope)),
    security(("bearerAuth" = [])))]
pub async fn get_taxonomy_entry(
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> ApiResult<Json<TaxonomyEntry>> {
    require(&principal, Scope::Read)?;
    let resolution = resolve(&id);
    if let Resolution::Invalid(invalid) = &resolution {
        let reason = ReasonView::of(&invalid.reason);
        let details = json!({"id": id, "reason": reason});
        let error = if reason.malformed {
            ApiError::invalid(format!("{id:?} is not a taxonomy id: {}", reason.message))
        } else {
            ApiError::new(
                "not_found",
                format!("{id:?} is not in the taxonomy: {}", reason.message),
            )
        };
        return Err(error.with_details(details));
    }
    match entry(&resolution) {
        Ok(Some(entry)) => Ok(Json(entry)),
        Ok(None) => Err(ApiError::not_found(format!("taxonomy id {id}"))),
        Err(errors) => {
            tracing::error!(%errors, %id, "a standard descriptor failed weft's rules");
            Err(ApiError::new(
                "internal",
                "internal error; see the server log",
            ))
        }
    }
}

/// The entry of a standard or custom id (`None` for an invalid one): what
/// `GET /v1/taxonomy/{id}` answers and `weft taxonomy show --json` prints.
pub fn entry(resolution: &Resolution) -> Result<Option<TaxonomyEntry>, DescriptorErrors> {
    let (id, verification, descriptor) = match resolution {
        Resolution::Standard(standard) => (
            &standard.id,
            Some(standard.row.verification.to_owned()),
            Some(standard.descriptor()?.canonical_raw().to_owned()),
        ),
        Resolution::Custom(custom) => (&custom.id, None, None),
        Resolution::Invalid(_) => return Ok(None),
    };
    Ok(Some(TaxonomyEntry {
        id: id.clone(),
        taxonomy_version: TAXONOMY_VERSION.to_owned(),
        classification: ClassificationView::of(resolution),
        verification,
        descriptor,
    }))
}

/// Every row of `domain` (all rows for `None`) as one document shaped like a single page
/// of `GET /v1/taxonomy`: what `weft taxonomy list --json` prints.
pub fn full_list(domain: Option<&str>) -> TaxonomyList {
    TaxonomyList {
        taxonomy_version: TAXONOMY_VERSION.to_owned(),
        spec: SPEC.to_owned(),
        domains: DOMAINS.iter().map(|d| (*d).to_owned()).collect(),
        rows: rows()
            .iter()
            .filter(|r| domain.is_none_or(|d| r.domain() == d))
            .map(|r| RowView::of(r))
            .collect(),
        next_cursor: None,
        has_more: false,
    }
}
