-- Webhooks and events. An organisation's admins register webhooks; a change that an event
-- type names makes one event per enabled webhook that asks for it, in the change's own
-- transaction, so an event exists exactly when its change does. One host at a time (by
-- lease) delivers them, in order per webhook and subject (`seq` orders them), at least once,
-- trying again with a growing wait for a day. The events of a webhook
-- go with it; finished events are kept 30 days.
CREATE TABLE webhooks (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL,
    created_by      TEXT,
    post_url        TEXT NOT NULL,
    event_type      TEXT NOT NULL,
    enabled         INTEGER NOT NULL DEFAULT 1,
    api_version     TEXT NOT NULL DEFAULT 'v1',
    secret          TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
) STRICT;
CREATE INDEX webhooks_of_organization ON webhooks (organization_id, event_type);

CREATE TABLE events (
    seq              INTEGER PRIMARY KEY,
    id               TEXT NOT NULL UNIQUE,
    organization_id  TEXT NOT NULL,
    webhook_id       TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_type       TEXT NOT NULL,
    subject          TEXT NOT NULL,
    payload          TEXT NOT NULL,
    status           TEXT NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  TEXT NOT NULL,
    -- Tries go on for a day from here: the event's making, or a redelivery asked by hand.
    tries_from       TEXT NOT NULL,
    by_hand          INTEGER NOT NULL DEFAULT 0,
    delivered_at     TEXT,
    last_error       TEXT,
    created_at       TEXT NOT NULL
) STRICT;
-- The open events of a webhook and subject in order (who goes first), and those due.
CREATE INDEX events_open ON events (webhook_id, subject, seq) WHERE status IN ('pending', 'retryable');
CREATE INDEX events_due ON events (webhook_id, next_attempt_at, seq) WHERE status IN ('pending', 'retryable');
CREATE INDEX events_deadline ON events (tries_from) WHERE status IN ('pending', 'retryable');
CREATE INDEX events_of_organization ON events (organization_id, created_at, id);
CREATE INDEX events_finished ON events (created_at) WHERE status IN ('success', 'failed');

-- The delivery log: each try of each event.
CREATE TABLE webhook_deliveries (
    id          TEXT PRIMARY KEY,
    event_id    TEXT NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    webhook_id  TEXT NOT NULL,
    event_type  TEXT NOT NULL,
    at          TEXT NOT NULL,
    delivered   INTEGER NOT NULL,
    status_code INTEGER,
    error       TEXT,
    response    TEXT NOT NULL,
    duration_ms INTEGER NOT NULL,
    by_hand     INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX webhook_deliveries_of_webhook ON webhook_deliveries (webhook_id, at, id);
CREATE INDEX webhook_deliveries_of_event ON webhook_deliveries (event_id, at);
