//! Projects: create, list, get, update, delete, members and sharing.

use mgds_api::{ChangeSharing, Project, ProjectAddUser, ProjectCreate, ProjectMember, ProjectUpdate, UserRequest};
use reqwest::Method;

use crate::retry::Idempotency;
use crate::{Client, Error, ListRequest, ResourceId, Result, reference};

/// The projects of the service (`client.projects()`).
#[derive(Debug, Clone)]
pub struct Projects {
    client: Client,
}

impl Projects {
    pub(crate) fn new(client: Client) -> Self {
        Projects { client }
    }

    /// The projects the caller can see (`GET /projects`).
    pub fn list(&self) -> ListRequest<Project> {
        ListRequest::new(self.client.clone(), &["projects"])
    }

    /// Public projects (`GET /projects/public`).
    pub fn list_public(&self) -> ListRequest<Project> {
        ListRequest::new(self.client.clone(), &["projects", "public"])
    }

    /// One project (`GET /projects/{id}`).
    pub async fn get(&self, id: impl ResourceId) -> Result<Project> {
        self.client.get_json(self.client.api_url(&["projects", id.resource_id()])).await
    }

    /// Creates a project with this short name (3 to 15 of `a-zA-Z0-9_-`, unique within the
    /// organisation) (`POST /projects`).
    pub fn create(&self, project_name: impl Into<String>) -> ProjectCreateRequest {
        ProjectCreateRequest {
            client: self.client.clone(),
            body: ProjectCreate { project_name: project_name.into(), ..ProjectCreate::default() },
        }
    }

    /// Changes a project's names or description (`PATCH /projects/{id}`).
    pub fn update(&self, id: impl ResourceId) -> ProjectUpdateRequest {
        ProjectUpdateRequest {
            client: self.client.clone(),
            id: id.resource_id().to_string(),
            body: ProjectUpdate::default(),
        }
    }

    /// Deletes a project; its samples stay with their owners (`DELETE /projects/{id}`).
    pub async fn delete(&self, id: impl ResourceId) -> Result<()> {
        self.client.delete(self.client.api_url(&["projects", id.resource_id()])).await
    }

    /// Who belongs to the project and what they may do (`GET /projects/{id}/members`).
    pub async fn members(&self, id: impl ResourceId) -> Result<Vec<ProjectMember>> {
        self.client.get_json(self.client.api_url(&["projects", id.resource_id(), "members"])).await
    }

    /// Adds `user` (or changes their permissions; `None` gives all four)
    /// (`POST /projects/{id}/add_user`).
    pub async fn add_user(
        &self,
        id: impl ResourceId,
        user: impl ResourceId,
        permissions: Option<Vec<String>>,
    ) -> Result<Project> {
        let url = self.client.api_url(&["projects", id.resource_id(), "add_user"]);
        let body = ProjectAddUser { user: reference("users", &user), permissions };
        self.client.send_json(Method::POST, url, &body, Idempotency::Safe).await
    }

    /// Removes `user` (`POST /projects/{id}/remove_user`).
    pub async fn remove_user(&self, id: impl ResourceId, user: impl ResourceId) -> Result<Project> {
        let url = self.client.api_url(&["projects", id.resource_id(), "remove_user"]);
        let body = UserRequest { user: reference("users", &user) };
        self.client.send_json(Method::POST, url, &body, Idempotency::Safe).await
    }

    /// Makes the project public or not (`POST /projects/{id}/change_sharing`).
    pub async fn change_sharing(&self, id: impl ResourceId, public: bool) -> Result<Project> {
        let url = self.client.api_url(&["projects", id.resource_id(), "change_sharing"]);
        self.client.send_json(Method::POST, url, &ChangeSharing { public }, Idempotency::Safe).await
    }
}

/// `POST /projects`; see [`Projects::create`].
#[derive(Debug, Clone)]
pub struct ProjectCreateRequest {
    client: Client,
    body: ProjectCreate,
}

impl ProjectCreateRequest {
    /// Display name (default: the short name).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.body.name = Some(name.into());
        self
    }

    /// Free-text description.
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.body.description = Some(text.into());
        self
    }

    /// The lab's own identifier.
    pub fn external_id(mut self, id: impl Into<String>) -> Self {
        self.body.external_id = Some(id.into());
        self
    }

    /// Whether anyone may see it.
    pub fn public(mut self, public: bool) -> Self {
        self.body.public = Some(public);
        self
    }

    /// Creates it (not retried once sent). A short name already used is [`Error::Conflict`].
    pub async fn send(self) -> Result<Project> {
        mgds_api::check_project_name(&self.body.project_name).map_err(Error::InvalidInput)?;
        let url = self.client.api_url(&["projects"]);
        self.client.send_json(Method::POST, url, &self.body, Idempotency::ConnectOnly).await
    }
}

/// `PATCH /projects/{id}`; see [`Projects::update`].
#[derive(Debug, Clone)]
pub struct ProjectUpdateRequest {
    client: Client,
    id: String,
    body: ProjectUpdate,
}

impl ProjectUpdateRequest {
    /// New display name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.body.name = Some(name.into());
        self
    }

    /// New short name.
    pub fn project_name(mut self, name: impl Into<String>) -> Self {
        self.body.project_name = Some(name.into());
        self
    }

    /// New description; `None` clears it.
    pub fn description(mut self, text: Option<String>) -> Self {
        self.body.description = Some(text);
        self
    }

    /// Sends the change; answers the project as it now is.
    pub async fn send(self) -> Result<Project> {
        let url = self.client.api_url(&["projects", &self.id]);
        self.client.send_json(Method::PATCH, url, &self.body, Idempotency::Safe).await
    }
}
