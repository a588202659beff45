//! Sample metadata: its records, the reference schema's rules for its fields, and its changes
//! (an external sample id is unique among a user's pre-uploaded samples).

use mgds_api::{
    ErrorCode, LIBRARY_TYPES, MAX_CUSTOM_METADATA_BYTES, MAX_CUSTOM_METADATA_KEY_CHARS, MAX_CUSTOM_METADATA_KEYS,
    MAX_DESCRIPTION_CHARS, MAX_EXTERNAL_SAMPLE_ID_CHARS, Metadata, MetadataInput, PLATFORMS, Ref, SAMPLE_TYPES,
};
use serde_json::{Map, Value};

use super::access;
use super::audit;
use super::caller::Caller;
use super::db::{Scope, Tx, args, begin_write, flag};
use super::handle::Store;
use super::records::{self, Found, ListQuery, ListSpec, ref_id};
use super::samples;
use crate::error::{ApiError, ApiResult};
use crate::listing::{self, Bind, Field, FieldKind};

/// The fields of `where` and `sort` in lists of metadata records.
pub(crate) const METADATA_FIELDS: &[Field] = &[
    Field { name: "$uri", column: "m.id", kind: FieldKind::Uri { collection: "metadata" }, sortable: true },
    Field { name: "sample", column: "m.sample_id", kind: FieldKind::Ref { collection: "samples" }, sortable: true },
    Field { name: "starred", column: "m.starred", kind: FieldKind::Bool, sortable: true },
    Field { name: "external_sample_id", column: "m.external_sample_id", kind: FieldKind::Text, sortable: true },
    Field { name: "name", column: "m.name", kind: FieldKind::Text, sortable: true },
    Field { name: "description", column: "m.description", kind: FieldKind::Text, sortable: true },
    Field { name: "date_collected", column: "m.date_collected", kind: FieldKind::DateTime, sortable: true },
    Field { name: "date_sequenced", column: "m.date_sequenced", kind: FieldKind::DateTime, sortable: true },
    Field { name: "platform", column: "m.platform", kind: FieldKind::Enum(&PLATFORMS), sortable: true },
    Field { name: "library_type", column: "m.library_type", kind: FieldKind::Enum(&LIBRARY_TYPES), sortable: true },
    Field { name: "sample_type", column: "m.sample_type", kind: FieldKind::Enum(&SAMPLE_TYPES), sortable: true },
    Field { name: "location_lat", column: "m.location_lat", kind: FieldKind::Number, sortable: true },
    Field { name: "location_lon", column: "m.location_lon", kind: FieldKind::Number, sortable: true },
    Field { name: "location_string", column: "m.location_string", kind: FieldKind::Text, sortable: true },
];

/// The columns of a metadata record (aliased `m`), as [`MetadataRow`] reads them.
pub(crate) const COLUMNS: &str = "m.id, m.sample_id, m.starred, m.custom, m.external_sample_id, m.name, m.description, \
     m.date_collected, m.date_sequenced, m.platform, m.library_type, m.sample_type, m.location_lat, m.location_lon, \
     m.location_string";

const METADATA: ListSpec = ListSpec {
    from: "metadata m",
    columns: COLUMNS,
    fields: METADATA_FIELDS,
    default_order: "m.rowid ASC",
    tiebreak: "m.id ASC",
};

#[derive(sqlx::FromRow)]
pub(crate) struct MetadataRow {
    id: String,
    sample_id: String,
    starred: i64,
    custom: String,
    external_sample_id: Option<String>,
    name: Option<String>,
    description: Option<String>,
    date_collected: Option<String>,
    date_sequenced: Option<String>,
    platform: Option<String>,
    library_type: Option<String>,
    sample_type: Option<String>,
    location_lat: Option<f64>,
    location_lon: Option<f64>,
    location_string: Option<String>,
}

impl MetadataRow {
    pub(crate) fn into_api(self) -> Metadata {
        Metadata {
            uri: Ref::new("metadata", &self.id).uri,
            sample: Ref::new("samples", &self.sample_id),
            starred: flag(self.starred),
            custom: serde_json::from_str(&self.custom).unwrap_or_default(),
            external_sample_id: self.external_sample_id,
            name: self.name,
            description: self.description,
            date_collected: self.date_collected,
            date_sequenced: self.date_sequenced,
            platform: self.platform,
            library_type: self.library_type,
            sample_type: self.sample_type,
            location_lat: self.location_lat,
            location_lon: self.location_lon,
            location_string: self.location_string,
        }
    }
}

/// The metadata record of the sample `sample_id`, whoever may see it (for the service's own work).
pub(crate) async fn of_sample_row(db: &super::db::Pool, sample_id: &str) -> ApiResult<Option<MetadataRow>> {
    let sql = format!("SELECT {COLUMNS} FROM metadata m WHERE m.sample_id = $1");
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(sample_id).fetch_optional(db).await?)
}

/// One page of the metadata of the samples the caller may see.
pub async fn list(state: &Store, caller: &Caller, q: &ListQuery<'_>) -> ApiResult<Found<Metadata>> {
    let rows: Found<MetadataRow> =
        records::list_parts(&state.db, &METADATA, q, access::metadata_parts(caller), None).await?;
    Ok(rows.map(MetadataRow::into_api))
}

/// The statements of [`list`] for a list whose total is `total`: for checking their plans.
#[doc(hidden)]
pub fn list_statements(caller: &Caller, q: &ListQuery<'_>, total: i64) -> ApiResult<Vec<records::Statement>> {
    records::parts_statements(&METADATA, q, &access::metadata_parts(caller), None, total)
}

async fn visible(state: &Store, caller: &Caller, id: &str) -> ApiResult<MetadataRow> {
    records::fetch_one(&state.db, &METADATA, "m.id", id, access::via_sample(caller, "m", "sample_id"))
        .await?
        .ok_or_else(|| ApiError::not_found("metadata"))
}

/// The metadata record `id` if the caller may see its sample.
pub async fn get(state: &Store, caller: &Caller, id: &str) -> ApiResult<Metadata> {
    Ok(visible(state, caller, id).await?.into_api())
}

/// Changes the given fields of a metadata record, for the sample's owner or project members
/// with `can_edit_metadata`.
pub async fn update(state: &Store, caller: &Caller, id: &str, mut req: MetadataInput) -> ApiResult<Metadata> {
    let user = caller.require()?;
    let row = visible(state, caller, id).await?;
    let sample =
        samples::visible(state, caller, &row.sample_id).await?.ok_or_else(|| ApiError::not_found("metadata"))?;
    samples::may_act(state, user, &sample, "can_edit_metadata", "change its metadata").await?;
    if let Some(s) = &req.sample
        && ref_id("sample", s, "samples")? != row.sample_id
    {
        return Err(ApiError::BadRequest("a metadata record cannot be moved to another sample".into()));
    }
    validate(&mut req)?;
    let mut tx = begin_write(&state.db, Scope::User(&sample.owner_id)).await?;
    if let Some(Some(ext)) = &req.external_sample_id
        && external_id_taken(&mut tx, &sample.owner_id, ext, Some(&row.sample_id)).await?
    {
        return Err(duplicate_external_id(ext));
    }
    apply(&mut tx, id, &req).await?;
    let mut asked = serde_json::to_value(&req).map_err(ApiError::internal)?;
    if let Some(o) = asked.as_object_mut() {
        o.remove("sample");
    }
    let before = serde_json::to_value(row.into_api()).map_err(ApiError::internal)?;
    let changes = audit::changed(&before, &asked);
    if changes.as_object().is_some_and(|c| !c.is_empty()) {
        let entry = audit::Entry::new("metadata.updated", "metadata", id, &sample.owner_id).with(changes);
        audit::record(&mut tx, Some(user), entry).await?;
    }
    tx.commit().await?;
    get(state, caller, id).await
}

fn check_len(field: &str, v: &Option<Option<String>>, max: usize) -> ApiResult<()> {
    if let Some(Some(s)) = v
        && s.chars().count() > max
    {
        return Err(ApiError::BadRequest(format!("metadata.{field} is longer than {max} characters")));
    }
    Ok(())
}

fn check_enum(field: &str, v: &Option<Option<String>>, allowed: &[&str]) -> ApiResult<()> {
    if let Some(Some(s)) = v
        && !allowed.contains(&s.as_str())
    {
        return Err(ApiError::BadRequest(format!(
            "metadata.{field} {s:?} is not one of the allowed values: {}",
            allowed.join(", ")
        )));
    }
    Ok(())
}

fn check_range(field: &str, v: Option<Option<f64>>, lo: f64, hi: f64) -> ApiResult<()> {
    if let Some(Some(x)) = v
        && !(lo..=hi).contains(&x)
    {
        return Err(ApiError::BadRequest(format!("metadata.{field} must be between {lo} and {hi}")));
    }
    Ok(())
}

fn normalize_date(field: &str, v: &mut Option<Option<String>>) -> ApiResult<()> {
    if let Some(Some(s)) = v {
        *s = listing::normalize_ts(s).map_err(|e| {
            ApiError::BadRequest(format!(
                "metadata.{field} must be an RFC 3339 date-time (e.g. 2026-03-01T09:30:00Z): {e}"
            ))
        })?;
    }
    Ok(())
}

/// Checks metadata against the reference schema's rules; normalises dates.
pub fn validate(m: &mut MetadataInput) -> ApiResult<()> {
    check_len("external_sample_id", &m.external_sample_id, MAX_EXTERNAL_SAMPLE_ID_CHARS)?;
    check_len("name", &m.name, 255)?;
    check_len("location_string", &m.location_string, 255)?;
    check_enum("platform", &m.platform, &PLATFORMS)?;
    check_enum("library_type", &m.library_type, &LIBRARY_TYPES)?;
    check_enum("sample_type", &m.sample_type, &SAMPLE_TYPES)?;
    check_range("location_lat", m.location_lat, -90.0, 90.0)?;
    check_range("location_lon", m.location_lon, -180.0, 180.0)?;
    normalize_date("date_collected", &mut m.date_collected)?;
    normalize_date("date_sequenced", &mut m.date_sequenced)?;
    check_len("description", &m.description, MAX_DESCRIPTION_CHARS)?;
    if let Some(custom) = &m.custom {
        if custom.len() > MAX_CUSTOM_METADATA_KEYS {
            return Err(ApiError::BadRequest(format!(
                "metadata.custom has {} keys; it may have at most {MAX_CUSTOM_METADATA_KEYS}",
                custom.len()
            )));
        }
        for (k, v) in custom {
            if k.chars().count() > MAX_CUSTOM_METADATA_KEY_CHARS {
                let shown: String = k.chars().take(40).collect();
                return Err(ApiError::BadRequest(format!(
                    "metadata.custom key {shown:?}... is longer than {MAX_CUSTOM_METADATA_KEY_CHARS} characters"
                )));
            }
            if v.is_object() || v.is_array() {
                return Err(ApiError::BadRequest(format!(
                    "metadata.custom.{k} must be a string, number, boolean or null"
                )));
            }
        }
        let bytes = Value::Object(custom.clone()).to_string().len();
        if bytes > MAX_CUSTOM_METADATA_BYTES {
            return Err(ApiError::BadRequest(format!(
                "metadata.custom is {bytes} bytes as JSON; it may be at most {MAX_CUSTOM_METADATA_BYTES} bytes"
            )));
        }
    }
    if let Some(Some(id)) = &m.external_sample_id
        && id.trim().is_empty()
    {
        return Err(ApiError::BadRequest("metadata.external_sample_id must not be empty".into()));
    }
    Ok(())
}

/// Whether another of `owner`'s samples already uses `external_id`.
pub(crate) async fn external_id_taken(
    tx: &mut Tx,
    owner: &str,
    external_id: &str,
    except_sample: Option<&str>,
) -> ApiResult<bool> {
    let n: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM metadata WHERE owner_id = $1 AND external_sample_id = $2 AND sample_id != $3",
    )
    .bind(owner)
    .bind(external_id)
    .bind(except_sample.unwrap_or(""))
    .fetch_one(&mut **tx)
    .await?;
    Ok(n > 0)
}

/// The refusal of an external sample id that another of the user's samples uses.
pub(crate) fn duplicate_external_id(id: &str) -> ApiError {
    ApiError::Conflict(format!(
        "external_sample_id {id:?} is already used by another of your samples; post only unique IDs"
    ))
    .with_code(ErrorCode::DuplicateExternalSampleId)
}

/// The id of the metadata record of `sample_id`.
pub(crate) async fn of_sample(tx: &mut Tx, sample_id: &str) -> ApiResult<String> {
    Ok(sqlx::query_scalar("SELECT id FROM metadata WHERE sample_id = $1").bind(sample_id).fetch_one(&mut **tx).await?)
}

/// Sets the keys of `add` in the custom metadata of `sample_id`, keeping the others; where the
/// keys would pass [`MAX_CUSTOM_METADATA_KEYS`], the last of the others make room (what the
/// service writes is the record of what it did, so it is never the part dropped).
pub(crate) async fn add_custom(tx: &mut Tx, sample_id: &str, add: &Map<String, Value>) -> ApiResult<()> {
    let text: String = sqlx::query_scalar("SELECT custom FROM metadata WHERE sample_id = $1")
        .bind(sample_id)
        .fetch_one(&mut **tx)
        .await?;
    let mut custom: Map<String, Value> = serde_json::from_str(&text).unwrap_or_default();
    for k in add.keys() {
        custom.remove(k);
    }
    while custom.len() + add.len() > MAX_CUSTOM_METADATA_KEYS {
        let Some(last) = custom.keys().next_back().cloned() else { break };
        custom.remove(&last);
    }
    custom.extend(add.iter().map(|(k, v)| (k.clone(), v.clone())));
    sqlx::query("UPDATE metadata SET custom = $1 WHERE sample_id = $2")
        .bind(Value::Object(custom).to_string())
        .bind(sample_id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Copies the metadata of the sample `from` onto the sample `to` (a copy made of it), with
/// `name` as its name; its lab identifier and star are not copied (they name one record).
pub(crate) async fn copy(tx: &mut Tx, from: &str, to: &str, name: &str) -> ApiResult<()> {
    sqlx::query(
        "UPDATE metadata SET (custom, description, date_collected, date_sequenced, platform, library_type, \
         sample_type, location_lat, location_lon, location_string) = \
         (SELECT custom, description, date_collected, date_sequenced, platform, library_type, sample_type, \
         location_lat, location_lon, location_string FROM metadata WHERE sample_id = $1) WHERE sample_id = $2",
    )
    .bind(from)
    .bind(to)
    .execute(&mut **tx)
    .await?;
    sqlx::query("UPDATE metadata SET name = $1 WHERE sample_id = $2").bind(name).bind(to).execute(&mut **tx).await?;
    Ok(())
}

/// Writes the given metadata fields (absent ones are left alone).
pub(crate) async fn apply(tx: &mut Tx, metadata_id: &str, m: &MetadataInput) -> ApiResult<()> {
    let mut sets: Vec<&'static str> = Vec::new();
    let mut binds: Vec<Bind> = Vec::new();
    let text = |v: &Option<String>| v.clone().map_or(Bind::Null, Bind::Text);
    let real = |v: &Option<f64>| v.map_or(Bind::Null, Bind::Real);
    if let Some(v) = m.starred {
        sets.push("starred = ?");
        binds.push(Bind::Int(i64::from(v)));
    }
    if let Some(v) = &m.custom {
        sets.push("custom = ?");
        binds.push(Bind::Text(Value::Object(v.clone()).to_string()));
    }
    let texts: [(&'static str, &Option<Option<String>>); 9] = [
        ("external_sample_id = ?", &m.external_sample_id),
        ("name = ?", &m.name),
        ("description = ?", &m.description),
        ("date_collected = ?", &m.date_collected),
        ("date_sequenced = ?", &m.date_sequenced),
        ("platform = ?", &m.platform),
        ("library_type = ?", &m.library_type),
        ("sample_type = ?", &m.sample_type),
        ("location_string = ?", &m.location_string),
    ];
    for (set, v) in texts {
        if let Some(v) = v {
            sets.push(set);
            binds.push(text(v));
        }
    }
    for (set, v) in [("location_lat = ?", &m.location_lat), ("location_lon = ?", &m.location_lon)] {
        if let Some(v) = v {
            sets.push(set);
            binds.push(real(v));
        }
    }
    if sets.is_empty() {
        return Ok(());
    }
    binds.push(Bind::Text(metadata_id.to_string()));
    let sql = format!("UPDATE metadata SET {} WHERE id = ?", sets.join(", "));
    sqlx::query_with(super::db::numbered(sql), args(&binds)?).execute(&mut **tx).await?;
    Ok(())
}
