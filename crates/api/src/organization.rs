//! An organisation and the people in it (MGDS additions to API v1; the README's "for lab IT"
//! section lists them): roles, the organisation's users as its admins manage them, invitations
//! and password links.

use serde::{Deserialize, Serialize};

use crate::Ref;

/// What a user may do in their organisation, as One Codex names the roles. Ordered: an owner
/// may do all an admin may, an admin all a member may.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(rename = "OrgRole"))]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Works on their own records and what others share with them.
    Member,
    /// Also sees and manages every record of the organisation's users, and manages members.
    Admin,
    /// Also manages admins and owners, and gives roles.
    Owner,
}

impl Role {
    /// Every role, lowest first.
    pub const ALL: [Role; 3] = [Role::Member, Role::Admin, Role::Owner];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Member => "member",
            Role::Admin => "admin",
            Role::Owner => "owner",
        }
    }

    /// Parses the wire spelling.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// Whether the role manages the organisation's records and people (admin or owner).
    pub fn manages(self) -> bool {
        self >= Role::Admin
    }

    /// Whether a user with this role may manage (disable, enable, reset the password of, revoke
    /// the keys of) another user of their organisation whose role is `target`: an owner manages
    /// everyone, an admin manages members.
    pub fn may_manage(self, target: Role) -> bool {
        self == Role::Owner || (self == Role::Admin && target == Role::Member)
    }

    /// Whether a user with this role may give `role` to someone (inviting, or changing a role):
    /// an owner gives any role, an admin makes members.
    pub fn may_give(self, role: Role) -> bool {
        self == Role::Owner || (self == Role::Admin && role == Role::Member)
    }
}

#[cfg(test)]
mod tests {
    use super::Role::{self, *};

    #[test]
    fn owners_manage_everyone_and_admins_manage_members() {
        for target in Role::ALL {
            assert!(Owner.may_manage(target) && Owner.may_give(target));
            assert!(!Member.may_manage(target) && !Member.may_give(target));
            assert_eq!(Admin.may_manage(target), target == Member);
            assert_eq!(Admin.may_give(target), target == Member);
        }
        assert!(Member < Admin && Admin < Owner);
        assert_eq!(Role::parse("owner"), Some(Owner));
        assert_eq!(Role::parse("Owner"), None);
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The caller's organisation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Organization {
    /// Address of the organisation (`/api/v1/organization` is the caller's).
    #[serde(rename = "$uri")]
    pub uri: String,
    /// Its name.
    pub name: String,
    /// When it was made (RFC 3339).
    pub created_at: String,
    /// The caller's role in it.
    pub role: Role,
    /// How many users it has (disabled ones included).
    pub users: i64,
    /// The lab's name on its reports' covers (an MGDS addition; its `name` when not set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lab_name: Option<String>,
    /// Its logo, shown on its reports' covers (`/api/v1/organization/logo`), if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logo: Option<String>,
}

/// A change to the caller's organisation (admins and owners). Its `name` is what users are
/// placed in it by (invitations, single sign-on, `mgds admin user add`) and does not change
/// here; the name its reports show does.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct OrganizationUpdate {
    /// The lab's name on its reports' covers (1 to 200 characters; an empty one goes back to
    /// the organisation's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lab_name: Option<String>,
}

/// The largest logo, in bytes (2 MiB).
pub const MAX_LOGO_BYTES: usize = 2 << 20;

/// The longest lab name on reports.
pub const MAX_ORGANIZATION_NAME_CHARS: usize = 200;

/// A user of the caller's organisation, as its admins see and manage them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Member {
    /// Address of the user (`/api/v1/users/{id}`).
    #[serde(rename = "$uri")]
    pub uri: String,
    /// E-mail address.
    pub email: String,
    /// Their role in the organisation.
    pub role: Role,
    /// When the account was made (RFC 3339).
    pub created_at: String,
    /// When the account was disabled; `null` while it is enabled.
    #[serde(default)]
    pub disabled_at: Option<String>,
    /// Who disabled it.
    #[serde(default)]
    pub disabled_by: Option<Ref>,
    /// Whether the user has a password (else they sign in with an API key, or have not yet
    /// taken up their invitation).
    pub has_password: bool,
    /// When an invitation or password link made for them ends, if one is open.
    #[serde(default)]
    pub link_expires_at: Option<String>,
    /// The last time one of their browser sessions was used (to within minutes).
    #[serde(default)]
    pub last_seen_at: Option<String>,
}

/// An organisation admin's request to add someone to the organisation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct MemberInvite {
    /// Their e-mail address.
    pub email: String,
    /// Their role (`member` if not given).
    #[serde(default)]
    pub role: Option<Role>,
}

/// A change to a user of the organisation: their role, or whether they are disabled.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct MemberUpdate {
    /// The new role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    /// `true` disables the account (its keys, sessions and download links stop at once; its
    /// records stay); `false` enables it again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disabled: Option<bool>,
}

/// A one-time link that lets a user set their password: an invitation to a new user, or a
/// password reset made by an admin. Shown once; the service keeps only its hash.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PasswordLink {
    /// The user it is for.
    pub user: Member,
    /// The address to give them: the service's page where they choose a password.
    pub url: String,
    /// When it stops working (RFC 3339).
    pub expires_at: String,
}

/// What a password link is for, as its page shows it before a password is chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PasswordLinkInfo {
    /// The account's e-mail address.
    pub email: String,
    /// The organisation's name.
    pub organization: String,
    /// `invitation` or `reset`.
    pub kind: String,
    /// When it stops working.
    pub expires_at: String,
}

/// A password link's secret, and (to use it) the password chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PasswordLinkUse {
    /// The secret from the link.
    pub token: String,
    /// The new password (left out to only look at the link).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
}

/// What revoking a user's credentials stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Revoked {
    /// Browser sessions ended.
    pub sessions: i64,
    /// Uploads not yet confirmed that were canceled.
    pub canceled_uploads: i64,
}

/// One entry of an organisation's audit trail (an MGDS addition): who changed what, when, from
/// where, before and after; or who downloaded what.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AuditEntry {
    /// Address of the entry.
    #[serde(rename = "$uri")]
    pub uri: String,
    /// When (RFC 3339).
    pub at: String,
    /// Who (`null`: the operator, on the service's machine, or the service itself).
    #[serde(default)]
    pub actor: Option<Ref>,
    /// Their e-mail address then.
    #[serde(default)]
    pub actor_email: Option<String>,
    /// The address the request came from.
    #[serde(default)]
    pub address: Option<String>,
    /// How the client signed in and what it named itself (`key: onecodex/0.17.0`).
    #[serde(default)]
    pub client: Option<String>,
    /// What happened, `kind.verb`: `sample.updated`, `document.shared`, `user.disabled`, ...
    pub action: String,
    /// The kind of record.
    pub target_kind: String,
    /// The record's id.
    pub target_id: String,
    /// What changed, `{"field": [before, after]}`, or facts of the action.
    pub changes: serde_json::Value,
    /// Its number in the organisation's chain (`null` for a few seconds, until chained).
    #[serde(default)]
    pub seq: Option<i64>,
    /// Its hash in the chain.
    #[serde(default)]
    pub hash: Option<String>,
}
