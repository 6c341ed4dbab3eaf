//! The OpenAPI 3.1 document, generated from the handlers' annotations.

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::routes;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearerAuth",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// Every route, body and error of the API.
#[derive(OpenApi)]
#[openapi(
    info(title = "weft", description = "The weft capability fabric: discover, pin and call capabilities."),
    paths(
        routes::health::healthz,
        routes::health::readyz,
        routes::capabilities::list_capabilities,
        routes::capabilities::get_capability,
        routes::capabilities::get_version,
        routes::providers::register,
        routes::providers::get_provider,
        routes::providers::unregister,
        routes::taxonomy::list_taxonomy,
        routes::taxonomy::get_taxonomy_entry,
        routes::verify::verify,
        routes::nodes::list_nodes,
        routes::nodes::get_node,
        routes::agents::list_agents,
        routes::agents::get_agent,
        routes::events::events,
        routes::calls::call,
        routes::streams::streams,
        routes::admin::create_token,
        routes::admin::list_tokens,
        routes::admin::revoke_token,
        routes::admin::create_tenant,
        routes::admin::list_tenants,
        routes::compatibility::get_settings,
        routes::compatibility::put_settings,
        routes::compatibility::check,
        routes::diagnostics::node,
        routes::diagnostics::metrics,
    ),
    components(schemas(
        crate::error::ErrorEnvelope,
        crate::error::ErrorBody,
        crate::features::FeatureEntry,
        routes::DescriptorDoc,
        weft_registry::model::EventRecord,
    )),
    modifiers(&BearerAuth),
    tags(
        (name = "capabilities", description = "Discover and pin capability contracts"),
        (name = "providers", description = "Register providers and publish descriptors; check a descriptor against the compatibility policy"),
        (name = "taxonomy", description = "The standard capability taxonomy (Swarmwage v0.1)"),
        (name = "verification", description = "Check outputs against the taxonomy's verification rules"),
        (name = "nodes", description = "Nodes and their discovery tags"),
        (name = "agents", description = "Agent capability catalogs"),
        (name = "events", description = "The registry change feed"),
        (name = "calls", description = "Call a pinned capability"),
        (name = "admin", description = "Tokens, tenants and their compatibility policies"),
        (name = "health", description = "Liveness and readiness"),
        (name = "diagnostics", description = "Call and stream counters, as JSON and for Prometheus"),
    )
)]
pub struct ApiDoc;

/// The document as JSON.
pub fn document() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}
