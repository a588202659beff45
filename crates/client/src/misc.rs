//! The smaller collections: metadata records, tags, users and sequencing batches.

use mgds_api::{Metadata, MetadataInput, SequencingBatch, Tag, TagCreate, User};
use reqwest::Method;
use serde_json::Value;

use crate::retry::Idempotency;
use crate::{Client, Filter, ListRequest, ResourceId, Result, reference};

/// The metadata records of samples (`client.metadata()`).
#[derive(Debug, Clone)]
pub struct MetadataRecords {
    client: Client,
}

impl MetadataRecords {
    pub(crate) fn new(client: Client) -> Self {
        MetadataRecords { client }
    }

    /// The records of the samples the caller can see (`GET /metadata`).
    pub fn list(&self) -> ListRequest<Metadata> {
        ListRequest::new(self.client.clone(), &["metadata"])
    }

    /// One record (`GET /metadata/{id}`); a sample's record is its `metadata` reference.
    pub async fn get(&self, id: impl ResourceId) -> Result<Metadata> {
        self.client.get_json(self.client.api_url(&["metadata", id.resource_id()])).await
    }

    /// Changes fields of a record (`PATCH /metadata/{id}`); fields not set are left alone.
    pub fn update(&self, id: impl ResourceId) -> MetadataUpdate {
        MetadataUpdate { client: self.client.clone(), id: id.resource_id().to_string(), body: MetadataInput::default() }
    }
}

/// `PATCH /metadata/{id}`; see [`MetadataRecords::update`].
#[derive(Debug, Clone)]
pub struct MetadataUpdate {
    client: Client,
    id: String,
    body: MetadataInput,
}

impl MetadataUpdate {
    /// Sends exactly these fields (replacing any set before).
    pub fn fields(mut self, input: MetadataInput) -> Self {
        self.body = input;
        self
    }

    /// Marks or unmarks as a favourite.
    pub fn starred(mut self, starred: bool) -> Self {
        self.body.starred = Some(starred);
        self
    }

    /// Display name; `None` clears it.
    pub fn name(mut self, name: Option<String>) -> Self {
        self.body.name = Some(name);
        self
    }

    /// Description; `None` clears it.
    pub fn description(mut self, text: Option<String>) -> Self {
        self.body.description = Some(text);
        self
    }

    /// The lab's own id; `None` clears it.
    pub fn external_sample_id(mut self, id: Option<String>) -> Self {
        self.body.external_sample_id = Some(id);
        self
    }

    /// Sequencing platform (one of [`mgds_api::PLATFORMS`]); `None` clears it.
    pub fn platform(mut self, platform: Option<String>) -> Self {
        self.body.platform = Some(platform);
        self
    }

    /// Sets one custom key (string, number, boolean or null), keeping the others given here.
    /// The service replaces the whole `custom` object with what is sent.
    pub fn custom(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.body.custom.get_or_insert_with(Default::default).insert(key.into(), value.into());
        self
    }

    /// Sends the change; answers the record as it now is.
    pub async fn send(self) -> Result<Metadata> {
        let url = self.client.api_url(&["metadata", &self.id]);
        self.client.send_json(Method::PATCH, url, &self.body, Idempotency::Safe).await
    }
}

/// The tags of the service (`client.tags()`).
#[derive(Debug, Clone)]
pub struct Tags {
    client: Client,
}

impl Tags {
    pub(crate) fn new(client: Client) -> Self {
        Tags { client }
    }

    /// The tags the caller can see (`GET /tags`).
    pub fn list(&self) -> ListRequest<Tag> {
        ListRequest::new(self.client.clone(), &["tags"])
    }

    /// One tag (`GET /tags/{id}`).
    pub async fn get(&self, id: impl ResourceId) -> Result<Tag> {
        self.client.get_json(self.client.api_url(&["tags", id.resource_id()])).await
    }

    /// Creates the tag `name` (or finds the caller's tag of that name) and attaches it to
    /// `sample` (`POST /tags`; not retried once sent).
    pub async fn create(&self, name: impl Into<String>, sample: impl ResourceId) -> Result<Tag> {
        let url = self.client.api_url(&["tags"]);
        let body = TagCreate { name: name.into(), sample: reference("samples", &sample) };
        self.client.send_json(Method::POST, url, &body, Idempotency::ConnectOnly).await
    }
}

/// The users the caller can see (`client.users()`).
#[derive(Debug, Clone)]
pub struct Users {
    client: Client,
}

impl Users {
    pub(crate) fn new(client: Client) -> Self {
        Users { client }
    }

    /// The caller's organisation and the people they share with (`GET /users`).
    pub fn list(&self) -> ListRequest<User> {
        ListRequest::new(self.client.clone(), &["users"])
    }

    /// One user (`GET /users/{id}`).
    pub async fn get(&self, id: impl ResourceId) -> Result<User> {
        self.client.get_json(self.client.api_url(&["users", id.resource_id()])).await
    }

    /// The user with exactly this e-mail address, to share a project or document with
    /// (`GET /users?where={"email": ...}`). On MGDS services the exact address is what lets
    /// the caller see and add a colleague; `None` if no account has it. Lookups that find
    /// nobody are limited like failed sign-ins.
    pub async fn find_by_email(&self, email: &str) -> Result<Option<User>> {
        let found = self.list().filter(Filter::new().eq("email", email.trim())).per_page(2).send().await?;
        Ok(found.items.into_iter().next())
    }
}

/// Sequencing batches (`client.batches()`).
#[derive(Debug, Clone)]
pub struct Batches {
    client: Client,
}

impl Batches {
    pub(crate) fn new(client: Client) -> Self {
        Batches { client }
    }

    /// The batches of the caller's organisation (`GET /sequencing/batches`).
    pub fn list(&self) -> ListRequest<SequencingBatch> {
        ListRequest::new(self.client.clone(), &["sequencing", "batches"])
    }

    /// One batch (`GET /sequencing/batches/{id}`).
    pub async fn get(&self, id: impl ResourceId) -> Result<SequencingBatch> {
        self.client.get_json(self.client.api_url(&["sequencing", "batches", id.resource_id()])).await
    }
}
