//! The caller's organisation and, for its admins and owners, its users, webhooks and events
//! (`client.organization()`; MGDS additions to API v1, but for reading webhooks and events).

use mgds_api::{
    Event, Member, MemberInvite, MemberUpdate, Organization as Org, PasswordLink, Revoked, Role, Webhook,
    WebhookCreate, WebhookDelivery, WebhookUpdate, WebhookWithSecret,
};
use reqwest::Method;

use crate::retry::Idempotency;
use crate::{Client, Filter, ListRequest, ResourceId, Result};

/// The media type of a picture by its first bytes (the service reads the bytes, not this).
fn picture_type(b: &[u8]) -> &'static str {
    if b.starts_with(b"\x89PNG") {
        "image/png"
    } else if b.starts_with(&[0xFF, 0xD8, 0xFF]) {
        "image/jpeg"
    } else {
        "image/svg+xml"
    }
}

/// The caller's organisation (`client.organization()`).
#[derive(Debug, Clone)]
pub struct Organization {
    client: Client,
}

impl Organization {
    pub(crate) fn new(client: Client) -> Self {
        Organization { client }
    }

    /// The organisation and the caller's role in it (`GET /organization`).
    pub async fn get(&self) -> Result<Org> {
        self.client.get_json(self.client.api_url(&["organization"])).await
    }

    /// Sets the lab's name its reports' covers show (`PATCH /organization`; admins and owners;
    /// empty: the organisation's name again).
    pub async fn set_lab_name(&self, name: &str) -> Result<Org> {
        let body = mgds_api::OrganizationUpdate { lab_name: Some(name.trim().to_string()) };
        self.client.send_json(Method::PATCH, self.client.api_url(&["organization"]), &body, Idempotency::Safe).await
    }

    /// Its logo's bytes, if it has one (`GET /organization/logo`).
    pub async fn logo(&self) -> Result<Option<bytes::Bytes>> {
        let call = crate::Call {
            method: Method::GET,
            url: self.client.api_url(&["organization", "logo"]),
            body: None,
            idempotency: Idempotency::Safe,
            gone_is_done: false,
        };
        match self.client.execute(call).await {
            Ok(answer) => Ok(Some(answer.body)),
            Err(crate::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Sets its logo (`PUT /organization/logo`; admins and owners): a PNG, JPEG or SVG picture of
    /// at most 2 MiB, which the service checks before it keeps it. Sent once.
    pub async fn set_logo(&self, picture: bytes::Bytes) -> Result<Org> {
        let url = self.client.api_url(&["organization", "logo"]);
        let kind = picture_type(&picture);
        let answer = self.client.send_bytes(Method::PUT, url, picture, kind).await?;
        serde_json::from_slice(&answer)
            .map_err(|source| crate::Error::Decode { what: "PUT /organization/logo".into(), source })
    }

    /// Removes its logo (`DELETE /organization/logo`; admins and owners).
    pub async fn remove_logo(&self) -> Result<Org> {
        let call = crate::Call {
            method: Method::DELETE,
            url: self.client.api_url(&["organization", "logo"]),
            body: None,
            idempotency: Idempotency::Safe,
            gone_is_done: false,
        };
        let answer = self.client.execute(call).await?;
        serde_json::from_slice(&answer.body)
            .map_err(|source| crate::Error::Decode { what: "DELETE /organization/logo".into(), source })
    }

    /// Its users, as its admins see them (`GET /organization/users`; admins and owners).
    pub fn users(&self) -> ListRequest<Member> {
        ListRequest::new(self.client.clone(), &["organization", "users"])
    }

    /// The user of the organisation with this e-mail address, if there is one.
    pub async fn find(&self, email: &str) -> Result<Option<Member>> {
        let email = email.trim().to_ascii_lowercase();
        let found = self.users().filter(Filter::new().eq("email", email)).per_page(2).send().await?;
        Ok(found.items.into_iter().next())
    }

    /// The organisation's audit trail, newest first (`GET /audit`; admins and owners).
    pub fn audit(&self) -> ListRequest<mgds_api::AuditEntry> {
        ListRequest::new(self.client.clone(), &["audit"])
    }

    /// One user (`GET /organization/users/{id}`).
    pub async fn user(&self, id: impl ResourceId) -> Result<Member> {
        self.client.get_json(self.client.api_url(&["organization", "users", id.resource_id()])).await
    }

    /// Adds `email` to the organisation with `role` and answers their invitation link
    /// (`POST /organization/users`; not retried once sent).
    pub async fn invite(&self, email: &str, role: Role) -> Result<PasswordLink> {
        let url = self.client.api_url(&["organization", "users"]);
        let body = MemberInvite { email: email.trim().to_string(), role: Some(role) };
        self.client.send_json(Method::POST, url, &body, Idempotency::ConnectOnly).await
    }

    /// Changes a user's role, or disables or enables them (`PATCH /organization/users/{id}`).
    pub async fn update(&self, id: impl ResourceId, change: &MemberUpdate) -> Result<Member> {
        let url = self.client.api_url(&["organization", "users", id.resource_id()]);
        self.client.send_json(Method::PATCH, url, change, Idempotency::Safe).await
    }

    /// A password reset link for a user (`POST /organization/users/{id}/reset_password`).
    pub async fn reset_password(&self, id: impl ResourceId) -> Result<PasswordLink> {
        let url = self.client.api_url(&["organization", "users", id.resource_id(), "reset_password"]);
        self.client.send_json(Method::POST, url, &serde_json::json!({}), Idempotency::ConnectOnly).await
    }

    /// Ends a user's API key and sessions (`POST /organization/users/{id}/revoke`).
    pub async fn revoke(&self, id: impl ResourceId) -> Result<Revoked> {
        let url = self.client.api_url(&["organization", "users", id.resource_id(), "revoke"]);
        self.client.send_json(Method::POST, url, &serde_json::json!({}), Idempotency::Safe).await
    }

    /// The organisation's webhooks (`GET /webhooks`; admins and owners).
    pub fn webhooks(&self) -> ListRequest<Webhook> {
        ListRequest::new(self.client.clone(), &["webhooks"])
    }

    /// Registers a webhook; answers it with its signing secret, shown only now (`POST /webhooks`;
    /// not retried once sent).
    pub async fn add_webhook(&self, req: &WebhookCreate) -> Result<WebhookWithSecret> {
        let url = self.client.api_url(&["webhooks"]);
        self.client.send_json(Method::POST, url, req, Idempotency::ConnectOnly).await
    }

    /// One webhook (`GET /webhooks/{id}`).
    pub async fn webhook(&self, id: impl ResourceId) -> Result<Webhook> {
        self.client.get_json(self.client.api_url(&["webhooks", id.resource_id()])).await
    }

    /// Changes a webhook's address, event type or state (`PATCH /webhooks/{id}`).
    pub async fn update_webhook(&self, id: impl ResourceId, change: &WebhookUpdate) -> Result<Webhook> {
        let url = self.client.api_url(&["webhooks", id.resource_id()]);
        self.client.send_json(Method::PATCH, url, change, Idempotency::Safe).await
    }

    /// Deletes a webhook with its events (`DELETE /webhooks/{id}`).
    pub async fn delete_webhook(&self, id: impl ResourceId) -> Result<()> {
        self.client.delete(self.client.api_url(&["webhooks", id.resource_id()])).await
    }

    /// Gives a webhook a new secret, answered only now (`POST /webhooks/{id}/secret`).
    pub async fn replace_webhook_secret(&self, id: impl ResourceId) -> Result<WebhookWithSecret> {
        let url = self.client.api_url(&["webhooks", id.resource_id(), "secret"]);
        self.client.send_json(Method::POST, url, &serde_json::json!({}), Idempotency::ConnectOnly).await
    }

    /// Sends a `ping` event to a webhook (`POST /webhooks/{id}/ping`).
    pub async fn ping_webhook(&self, id: impl ResourceId) -> Result<Event> {
        let url = self.client.api_url(&["webhooks", id.resource_id(), "ping"]);
        self.client.send_json(Method::POST, url, &serde_json::json!({}), Idempotency::ConnectOnly).await
    }

    /// A webhook's delivery log, newest first (`GET /webhooks/{id}/deliveries`).
    pub fn deliveries(&self, id: impl ResourceId) -> ListRequest<WebhookDelivery> {
        ListRequest::new(self.client.clone(), &["webhooks", id.resource_id(), "deliveries"])
    }

    /// The organisation's events, newest first (`GET /events`).
    pub fn events(&self) -> ListRequest<Event> {
        ListRequest::new(self.client.clone(), &["events"])
    }

    /// Delivers an event again now (`POST /events/{id}/redeliver`).
    pub async fn redeliver(&self, id: impl ResourceId) -> Result<Event> {
        let url = self.client.api_url(&["events", id.resource_id(), "redeliver"]);
        self.client.send_json(Method::POST, url, &serde_json::json!({}), Idempotency::Safe).await
    }
}
