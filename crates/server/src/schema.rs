//! The service's own root hyper-schema (`GET /api/v1/schema`), in the reference's style: per
//! resource, `properties` (from the `mgds-api` types the handlers serialize) and `links` (routes,
//! methods, request schemas from the same request types, and list filters from the same field
//! tables the list queries compile). Nothing here is written by hand twice, so it cannot drift
//! from what the routes do; an integration test also calls every link.

use schemars::JsonSchema;
use serde_json::{Map, Value, json};

use crate::listing::{Field, FieldKind};
use field_tables as ft;

fn schema_of<T: JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft07()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut v = serde_json::to_value(generator.into_root_schema_for::<T>()).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.remove("title");
    }
    v
}

fn link(method: &str, href: &str, rel: &str) -> Value {
    json!({"href": format!("/api/v1/{href}"), "method": method, "rel": rel})
}

fn with_schema(mut l: Value, schema: Value) -> Value {
    l["schema"] = schema;
    l
}

fn with_target(mut l: Value, target: Value) -> Value {
    l["targetSchema"] = target;
    l
}

/// The operators a field accepts, as a JSON Schema `anyOf`.
fn field_filter(f: &Field) -> Value {
    let value = match &f.kind {
        FieldKind::Text => json!({"type": ["string", "null"]}),
        FieldKind::DateTime => json!({"type": "string", "format": "date-time"}),
        FieldKind::Integer => json!({"type": ["integer", "null"]}),
        FieldKind::Number => json!({"type": ["number", "null"]}),
        FieldKind::Bool => json!({"type": ["boolean", "null"]}),
        FieldKind::Enum(values) => json!({"enum": values}),
        FieldKind::Uri { collection } => json!({"type": "string", "pattern": format!("^/api/v1/{collection}/[^/]+$")}),
        FieldKind::Ref { collection } | FieldKind::RefSet { collection, .. } => json!({
            "type": ["object", "null"],
            "additionalProperties": false,
            "properties": {"$ref": {"type": "string", "pattern": format!("^/api/v1/{collection}/[^/]+$")}}
        }),
    };
    let ops: &[&str] = match &f.kind {
        FieldKind::Text => {
            &["$eq", "$ne", "$in", "$contains", "$icontains", "$startswith", "$istartswith", "$endswith", "$iendswith"]
        }
        FieldKind::DateTime | FieldKind::Integer | FieldKind::Number => {
            &["$eq", "$ne", "$in", "$lt", "$lte", "$gt", "$gte", "$between"]
        }
        FieldKind::Bool => &["$eq", "$ne", "$in"],
        FieldKind::Enum(_) => &["$eq", "$ne", "$in"],
        FieldKind::Uri { .. } | FieldKind::Ref { .. } => &["$eq", "$ne", "$in"],
        FieldKind::RefSet { .. } => &["$eq", "$ne", "$in", "$contains", "$containsall", "$containsany"],
    };
    let mut any = vec![value.clone()];
    for op in ops {
        let v = match *op {
            "$in" | "$containsall" | "$containsany" => json!({"type": "array", "items": value}),
            "$between" => json!({"type": "array", "items": value, "minItems": 2, "maxItems": 2}),
            "$contains" | "$icontains" | "$startswith" | "$istartswith" | "$endswith" | "$iendswith"
                if !matches!(f.kind, FieldKind::RefSet { .. }) =>
            {
                json!({"type": "string", "minLength": 1})
            }
            _ => value.clone(),
        };
        any.push(json!({"type": "object", "additionalProperties": false, "required": [op], "properties": {*op: v}}));
    }
    json!({"anyOf": any})
}

/// The query schema of a list route built from its field table.
fn list_schema(fields: &[Field]) -> Value {
    let mut filters = Map::new();
    let mut sorts = Map::new();
    for f in fields {
        filters.insert(f.name.to_string(), field_filter(f));
        if f.sortable {
            sorts.insert(
                f.name.to_string(),
                json!({"type": "boolean", "description": format!("Sort by {} in descending order if 'true', ascending order if 'false'.", f.name)}),
            );
        }
    }
    json!({
        "type": "object",
        "properties": {
            "page": {"type": "integer", "minimum": 1, "default": mgds_api::DEFAULT_PAGE},
            "per_page": {"type": "integer", "minimum": 1, "maximum": mgds_api::MAX_PER_PAGE, "default": mgds_api::DEFAULT_PER_PAGE},
            "where": {"type": "object", "additionalProperties": false, "properties": filters},
            "sort": {"type": "object", "additionalProperties": false, "properties": sorts},
        }
    })
}

fn array_of(item: Value) -> Value {
    json!({"type": "array", "items": item})
}

fn this() -> Value {
    json!({"$ref": "#"})
}

fn instances(path: &str, rel: &str, fields: &[Field]) -> Value {
    with_target(with_schema(link("GET", path, rel), list_schema(fields)), array_of(this()))
}

fn analysis_links(collection: &str, readlevel: bool, results: bool) -> Vec<Value> {
    let mut l = vec![
        instances(collection, "instances", ft::ANALYSIS),
        instances(&format!("{collection}/public"), "instances_public", ft::ANALYSIS),
        with_target(link("GET", &format!("{collection}/{{id}}"), "self"), this()),
    ];
    if results {
        l.push(with_target(link("GET", &format!("{collection}/{{id}}/results"), "results"), json!({"type": "object"})));
    }
    if readlevel {
        l.push(with_target(
            link("GET", &format!("{collection}/{{id}}/readlevel"), "readlevel"),
            schema_of::<mgds_api::ReadlevelUrl>(),
        ));
        // An MGDS addition: the report as `kraken2 --report` writes it (text).
        l.push(with_target(
            link("GET", &format!("{collection}/{{id}}/kraken_report"), "kraken_report"),
            json!({"type": "string", "contentMediaType": "text/plain"}),
        ));
    }
    l
}

/// Each resource: its key in the root schema, its collection path, its properties and links.
fn resources() -> Vec<(&'static str, &'static str, Value, Vec<Value>)> {
    use mgds_api as a;
    let user_body = schema_of::<a::UserRequest>();
    vec![
        (
            "account",
            "account",
            schema_of::<a::Account>(),
            vec![with_target(link("GET", "account", "instances"), this())],
        ),
        (
            "samples",
            "samples",
            schema_of::<a::Sample>(),
            vec![
                instances("samples", "instances", ft::SAMPLE),
                instances("samples/public", "instances_public", ft::SAMPLE),
                with_target(link("GET", "samples/{id}", "self"), this()),
                with_target(
                    with_schema(link("PATCH", "samples/{id}", "update"), schema_of::<a::SampleUpdate>()),
                    this(),
                ),
                link("DELETE", "samples/{id}", "destroy"),
                with_target(
                    with_schema(link("POST", "samples/preupload", "preupload"), schema_of::<a::PreuploadRequest>()),
                    schema_of::<a::PreuploadResponse>(),
                ),
                with_target(
                    with_schema(
                        link("POST", "samples/init_upload", "init_upload"),
                        schema_of::<a::InitUploadRequest>(),
                    ),
                    schema_of::<a::InitUploadResponse>(),
                ),
                with_target(
                    with_schema(
                        link("POST", "samples/confirm_upload", "confirm_upload"),
                        schema_of::<a::ConfirmUploadRequest>(),
                    ),
                    schema_of::<a::ConfirmUploadResponse>(),
                ),
                with_target(
                    with_schema(
                        link("POST", "samples/cancel_upload", "cancel_upload"),
                        schema_of::<a::CancelUploadRequest>(),
                    ),
                    schema_of::<a::SuccessResponse>(),
                ),
                with_target(link("POST", "samples/{id}/download_uri", "download_uri"), schema_of::<a::DownloadUri>()),
                // An MGDS addition: a copy of the sample without its host's reads.
                with_target(
                    with_schema(
                        link("POST", "samples/{id}/remove_host", "remove_host"),
                        schema_of::<a::RemoveHostRequest>(),
                    ),
                    this(),
                ),
                // An MGDS addition: the controls analyses whose batch held the sample.
                with_target(
                    link("GET", "samples/{id}/controls", "controls"),
                    json!({"type": "array", "items": schema_of::<a::Analysis>()}),
                ),
            ],
        ),
        (
            "metadata",
            "metadata",
            schema_of::<a::Metadata>(),
            vec![
                instances("metadata", "instances", ft::METADATA),
                with_target(link("GET", "metadata/{id}", "self"), this()),
                with_target(
                    with_schema(link("PATCH", "metadata/{id}", "update"), schema_of::<a::MetadataInput>()),
                    this(),
                ),
            ],
        ),
        ("analyses", "analyses", schema_of::<a::Analysis>(), analysis_links("analyses", false, true)),
        ("classifications", "classifications", schema_of::<a::Analysis>(), {
            let mut l = analysis_links("classifications", true, false);
            l.push(with_target(
                link("GET", "classifications/{id}/results", "results"),
                schema_of::<a::ClassificationResults>(),
            ));
            l
        }),
        ("panels", "panels", schema_of::<a::Analysis>(), {
            let mut l = analysis_links("panels", false, false);
            l.push(with_target(link("GET", "panels/{id}/results", "results"), schema_of::<a::PanelResults>()));
            l
        }),
        ("alignments", "alignments", schema_of::<a::Analysis>(), analysis_links("alignments", false, false)),
        // The reference's `controls`: a negative control's batch scored against it (the
        // results are the scores; the file, the scores as CSV).
        ("controls", "controls", schema_of::<a::Analysis>(), {
            let mut l = analysis_links("controls", false, true);
            l.push(with_target(link("GET", "controls/{id}/files", "files"), json!({"type": "string"})));
            l
        }),
        // The reference's `reports`: a sample's report (the results say what is in it; the
        // file is the PDF).
        ("reports", "reports", schema_of::<a::Analysis>(), {
            let mut l = analysis_links("reports", false, true);
            l.push(with_target(link("GET", "reports/{id}/files", "files"), json!({"type": "string"})));
            l
        }),
        (
            "functional_profiles",
            "functional_profiles",
            schema_of::<a::Analysis>(),
            analysis_links("functional_profiles", false, true),
        ),
        (
            "jobs",
            "jobs",
            schema_of::<a::Job>(),
            vec![
                instances("jobs", "instances", ft::JOB),
                with_target(link("GET", "jobs/{id}", "self"), this()),
                with_target(
                    with_schema(link("POST", "jobs/{id}/run", "run"), schema_of::<a::JobRunRequest>()),
                    json!({"type": "object", "properties": {"$ref": {"type": "string", "pattern": "^/api/v1/analyses/[a-f0-9]{16}$"}}}),
                ),
            ],
        ),
        (
            "documents",
            "documents",
            schema_of::<a::Document>(),
            vec![
                instances("documents", "instances", ft::DOCUMENT),
                with_target(link("GET", "documents/{id}", "self"), this()),
                with_target(
                    with_schema(link("PATCH", "documents/{id}", "update"), schema_of::<a::DocumentUpdate>()),
                    this(),
                ),
                with_target(
                    with_schema(
                        link("PATCH", "documents/{id}/rename", "rename"),
                        json!({"type": "object", "required": ["filename"], "properties": {"filename": {"type": "string"}}}),
                    ),
                    this(),
                ),
                link("DELETE", "documents/{id}", "destroy"),
                with_target(
                    with_schema(
                        link("POST", "documents/init_upload", "init_upload"),
                        schema_of::<a::DocumentInitUploadRequest>(),
                    ),
                    schema_of::<a::InitUploadResponse>(),
                ),
                with_target(
                    with_schema(
                        link("POST", "documents/confirm_upload", "confirm_upload"),
                        schema_of::<a::DocumentConfirmUploadRequest>(),
                    ),
                    schema_of::<a::ConfirmUploadResponse>(),
                ),
                with_target(
                    with_schema(link("POST", "documents/{id}/add_user", "add_user"), user_body.clone()),
                    this(),
                ),
                with_target(
                    with_schema(link("POST", "documents/{id}/remove_user", "remove_user"), user_body.clone()),
                    this(),
                ),
                with_target(link("POST", "documents/{id}/download_uri", "download_uri"), schema_of::<a::DownloadUri>()),
            ],
        ),
        (
            "projects",
            "projects",
            schema_of::<a::Project>(),
            vec![
                instances("projects", "instances", ft::PROJECT),
                instances("projects/public", "instances_public", ft::PROJECT),
                with_target(with_schema(link("POST", "projects", "create"), schema_of::<a::ProjectCreate>()), this()),
                with_target(link("GET", "projects/{id}", "self"), this()),
                with_target(
                    with_schema(link("PATCH", "projects/{id}", "update"), schema_of::<a::ProjectUpdate>()),
                    this(),
                ),
                link("DELETE", "projects/{id}", "destroy"),
                with_target(link("GET", "projects/{id}/members", "members"), array_of(schema_of::<a::ProjectMember>())),
                with_target(
                    with_schema(link("POST", "projects/{id}/add_user", "add_user"), schema_of::<a::ProjectAddUser>()),
                    this(),
                ),
                with_target(with_schema(link("POST", "projects/{id}/remove_user", "remove_user"), user_body), this()),
                with_target(
                    with_schema(
                        link("POST", "projects/{id}/change_sharing", "change_sharing"),
                        schema_of::<a::ChangeSharing>(),
                    ),
                    this(),
                ),
            ],
        ),
        (
            "tags",
            "tags",
            schema_of::<a::Tag>(),
            vec![
                instances("tags", "instances", ft::TAG),
                with_target(with_schema(link("POST", "tags", "create"), schema_of::<a::TagCreate>()), this()),
                with_target(link("GET", "tags/{id}", "self"), this()),
            ],
        ),
        (
            "users",
            "users",
            schema_of::<a::User>(),
            vec![instances("users", "instances", ft::USER), with_target(link("GET", "users/{id}", "self"), this())],
        ),
        (
            "sequencing_batches",
            "sequencing/batches",
            schema_of::<a::SequencingBatch>(),
            vec![
                instances("sequencing/batches", "instances", ft::BATCH),
                with_target(link("GET", "sequencing/batches/{id}", "self"), this()),
            ],
        ),
        // MGDS additions: the caller's organisation, and its users as its admins manage them.
        (
            "organization",
            "organization",
            schema_of::<a::Organization>(),
            vec![
                with_target(link("GET", "organization", "self"), this()),
                with_target(
                    with_schema(link("PATCH", "organization", "update"), schema_of::<a::OrganizationUpdate>()),
                    this(),
                ),
                link("GET", "organization/logo", "logo"),
                with_target(link("PUT", "organization/logo", "set_logo"), this()),
                with_target(link("DELETE", "organization/logo", "remove_logo"), this()),
            ],
        ),
        (
            "organization_users",
            "organization/users",
            schema_of::<a::Member>(),
            vec![
                instances("organization/users", "instances", ft::MEMBER),
                with_target(link("GET", "organization/users/{id}", "self"), this()),
                with_target(
                    with_schema(link("POST", "organization/users", "invite"), schema_of::<a::MemberInvite>()),
                    schema_of::<a::PasswordLink>(),
                ),
                with_target(
                    with_schema(link("PATCH", "organization/users/{id}", "update"), schema_of::<a::MemberUpdate>()),
                    this(),
                ),
                with_target(
                    link("POST", "organization/users/{id}/reset_password", "reset_password"),
                    schema_of::<a::PasswordLink>(),
                ),
                with_target(link("POST", "organization/users/{id}/revoke", "revoke"), schema_of::<a::Revoked>()),
            ],
        ),
        ("audit", "audit", schema_of::<a::AuditEntry>(), vec![instances("audit", "instances", ft::AUDIT)]),
        // The reference schema's webhooks and events (read-only there); changing them, redelivery
        // and the delivery log are MGDS additions.
        (
            "webhooks",
            "webhooks",
            schema_of::<a::Webhook>(),
            vec![
                instances("webhooks", "instances", ft::WEBHOOK),
                with_target(link("GET", "webhooks/{id}", "self"), this()),
                with_target(
                    with_schema(link("POST", "webhooks", "create"), schema_of::<a::WebhookCreate>()),
                    schema_of::<a::WebhookWithSecret>(),
                ),
                with_target(
                    with_schema(link("PATCH", "webhooks/{id}", "update"), schema_of::<a::WebhookUpdate>()),
                    this(),
                ),
                link("DELETE", "webhooks/{id}", "destroy"),
                with_target(link("POST", "webhooks/{id}/secret", "secret"), schema_of::<a::WebhookWithSecret>()),
                with_target(link("POST", "webhooks/{id}/ping", "ping"), schema_of::<a::Event>()),
                with_target(
                    instances("webhooks/{id}/deliveries", "deliveries", ft::DELIVERY),
                    array_of(schema_of::<a::WebhookDelivery>()),
                ),
            ],
        ),
        (
            "events",
            "events",
            schema_of::<a::Event>(),
            vec![
                instances("events", "instances", ft::EVENT),
                with_target(link("GET", "events/{id}", "self"), this()),
                with_target(link("POST", "events/{id}/redeliver", "redeliver"), this()),
            ],
        ),
    ]
}

fn resource_value(path: &str, properties: Value, mut links: Vec<Value>) -> Value {
    links.insert(0, link("GET", &format!("{path}/schema"), "describedBy"));
    let props = properties.get("properties").cloned().unwrap_or_else(|| json!({}));
    json!({
        "$schema": "http://json-schema.org/draft-04/hyper-schema#",
        "type": "object",
        "properties": props,
        "links": links,
    })
}

/// The collection paths that have a `/schema` route (`samples`, `sequencing/batches`, ...).
pub fn collection_paths() -> Vec<&'static str> {
    resources().into_iter().map(|(_, path, _, _)| path).collect()
}

/// The root schema.
pub fn root() -> Value {
    let mut props = Map::new();
    for (key, path, properties, links) in resources() {
        props.insert(key.to_string(), resource_value(path, properties, links));
    }
    json!({
        "$schema": "http://json-schema.org/draft-04/hyper-schema#",
        "title": "MGDS API (v1)",
        "description": "The Microbial Genomics Data Service API (v1), as served by this MGDS service.",
        "version_info": {"api_version": "v1", "service_version": env!("CARGO_PKG_VERSION")},
        "properties": props,
    })
}

/// The schema of one resource, by collection path or key.
pub fn resource(name: &str) -> Option<Value> {
    resources()
        .into_iter()
        .find(|(key, path, _, _)| *key == name || *path == name)
        .map(|(_, path, properties, links)| resource_value(path, properties, links))
}

/// The `where`/`sort` field tables of every list, for the schema.
mod field_tables {
    pub(crate) use crate::store::analyses::ANALYSIS_FIELDS as ANALYSIS;
    pub(crate) use crate::store::audit::AUDIT_FIELDS as AUDIT;
    pub(crate) use crate::store::batches::BATCH_FIELDS as BATCH;
    pub(crate) use crate::store::documents::DOCUMENT_FIELDS as DOCUMENT;
    pub(crate) use crate::store::events::EVENT_FIELDS as EVENT;
    pub(crate) use crate::store::jobs::JOB_FIELDS as JOB;
    pub(crate) use crate::store::members::MEMBER_FIELDS as MEMBER;
    pub(crate) use crate::store::metadata::METADATA_FIELDS as METADATA;
    pub(crate) use crate::store::projects::PROJECT_FIELDS as PROJECT;
    pub(crate) use crate::store::samples::SAMPLE_FIELDS as SAMPLE;
    pub(crate) use crate::store::tags::TAG_FIELDS as TAG;
    pub(crate) use crate::store::users::USER_FIELDS as USER;
    pub(crate) use crate::store::webhooks::DELIVERY_FIELDS as DELIVERY;
    pub(crate) use crate::store::webhooks::WEBHOOK_FIELDS as WEBHOOK;
}
