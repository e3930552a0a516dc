//! Ledger fixtures written with plain SQL, as the platform would have written them. Times are
//! relative to the database's `now()`, never the local clock.

use sqlx::PgPool;
use uuid::Uuid;

/// A bootstrap to create, in any state the constraints allow.
#[derive(Debug, Clone)]
pub struct JobSpec {
    pub tenant: String,
    pub run_state: &'static str,
    pub checkpoint: &'static str,
    /// One item per entry, with this status, ordinals 0..n.
    pub items: Vec<&'static str>,
    /// How long ago the row last changed.
    pub updated_ago_secs: i64,
    /// Running jobs: when the worker lease expires (negative: already expired) …
    pub lease_expires_in_secs: i64,
    /// … and how long ago the worker last heartbeat.
    pub heartbeat_ago_secs: i64,
    pub row_version: i32,
    pub error_message: &'static str,
    /// The space's (and so the bootstrap's) id; a new random one when `None`.
    pub id: Option<Uuid>,
}

impl JobSpec {
    pub fn new(tenant: &str, run_state: &'static str) -> Self {
        let checkpoint = match run_state {
            "succeeded" => "published",
            "queued" => "pending_snapshot",
            _ => "rebuilding",
        };
        let items = match run_state {
            "queued" => vec![],
            "succeeded" => vec!["succeeded", "succeeded"],
            "failed" => vec!["succeeded", "failed", "pending"],
            "running" => vec!["succeeded", "running", "pending"],
            _ => vec!["succeeded", "pending"],
        };
        Self {
            tenant: tenant.to_string(),
            run_state,
            checkpoint,
            items,
            updated_ago_secs: 5,
            lease_expires_in_secs: 25,
            heartbeat_ago_secs: 5,
            row_version: 7,
            error_message: "document 3 failed to compile",
            id: None,
        }
    }
}

/// A created space and its bootstrap.
#[derive(Debug, Clone)]
pub struct Job {
    pub tenant: String,
    pub space: Uuid,
    pub bootstrap: Uuid,
    pub publication: Uuid,
    pub row_version: i32,
}

/// A knowledge space with one publication (so succeeded jobs can reference it).
pub async fn space(pool: &PgPool, tenant: &str) -> (Uuid, Uuid) {
    space_with_id(pool, tenant, Uuid::new_v4()).await
}

/// [`space`] with the id given.
pub async fn space_with_id(pool: &PgPool, tenant: &str, space: Uuid) -> (Uuid, Uuid) {
    let publication = Uuid::new_v4();
    sqlx::query("INSERT INTO knowledge_spaces (id, tenant_id, name) VALUES ($1, $2, 'fixture')")
        .bind(space)
        .bind(tenant)
        .execute(pool)
        .await
        .expect("space");
    sqlx::query(
        "INSERT INTO projection_set_publications (id, tenant_id, knowledge_space_id, fingerprint) \
         VALUES ($1, $2, $3, 'fp-fixture')",
    )
    .bind(publication)
    .bind(tenant)
    .bind(space)
    .execute(pool)
    .await
    .expect("publication");
    (space, publication)
}

/// Creates a space, its bootstrap in the given state, and its items.
pub async fn job(pool: &PgPool, spec: &JobSpec) -> Job {
    let id = spec.id.unwrap_or_else(Uuid::new_v4);
    let (space, publication) = space_with_id(pool, &spec.tenant, id).await;
    let bootstrap = space;
    let total = spec.items.len() as i32;
    let completed = spec.items.iter().filter(|s| **s == "succeeded").count() as i32;
    let running = spec.run_state == "running";
    let terminal = matches!(spec.run_state, "succeeded" | "failed" | "canceled");
    sqlx::query(
        "INSERT INTO legacy_space_publication_bootstraps ( \
           id, tenant_id, knowledge_space_id, idempotency_key, checkpoint, run_state, \
           total_documents, completed_documents, worker_id, lease_token, lease_expires_at, \
           heartbeat_at, last_error_code, last_error_message, row_version, \
           published_publication_id, published_fingerprint, published_head_revision, \
           snapshot_metadata, created_at, updated_at, completed_at) \
         VALUES ($1, $2, $3, 'legacy-space-publication-bootstrap-v1', $4, $5, $6, $7, \
           CASE WHEN $8 THEN 'worker-7' END, CASE WHEN $8 THEN gen_random_uuid() END, \
           CASE WHEN $8 THEN now() + $9 * interval '1 second' END, \
           CASE WHEN $8 THEN now() - $10 * interval '1 second' END, \
           CASE WHEN $5 = 'failed' THEN 'compile_failed' END, \
           CASE WHEN $5 = 'failed' THEN $11 END, $12, \
           CASE WHEN $5 = 'succeeded' THEN $13::uuid END, \
           CASE WHEN $5 = 'succeeded' THEN 'fp-fixture' END, \
           CASE WHEN $5 = 'succeeded' THEN 1 END, \
           '{}'::jsonb, now() - interval '1 hour', now() - $14 * interval '1 second', \
           CASE WHEN $15 THEN now() - $14 * interval '1 second' END)",
    )
    .bind(bootstrap)
    .bind(&spec.tenant)
    .bind(space)
    .bind(spec.checkpoint)
    .bind(spec.run_state)
    .bind(total)
    .bind(completed)
    .bind(running)
    .bind(spec.lease_expires_in_secs)
    .bind(spec.heartbeat_ago_secs)
    .bind(spec.error_message)
    .bind(spec.row_version)
    .bind(publication)
    .bind(spec.updated_ago_secs)
    .bind(terminal)
    .execute(pool)
    .await
    .expect("bootstrap");
    for (ordinal, status) in spec.items.iter().enumerate() {
        sqlx::query(
            "INSERT INTO legacy_space_publication_bootstrap_items ( \
               bootstrap_id, document_asset_id, document_version, document_sha256, ordinal, \
               compilation_attempt_id, status, last_error, created_at, updated_at) \
             VALUES ($1, gen_random_uuid(), 1, repeat('a', 64), $2, \
               CASE WHEN $3 IN ('running', 'failed', 'succeeded') THEN gen_random_uuid() END, \
               $3, CASE WHEN $3 = 'failed' THEN 'compiler exited 1' END, now(), now())",
        )
        .bind(bootstrap)
        .bind(ordinal as i32)
        .bind(*status)
        .execute(pool)
        .await
        .expect("item");
    }
    Job {
        tenant: spec.tenant.clone(),
        space,
        bootstrap,
        publication,
        row_version: spec.row_version,
    }
}

/// A mutation lease on a space, acquired `age_secs` ago.
pub async fn lease(pool: &PgPool, tenant: &str, space: Uuid, age_secs: i64) -> Uuid {
    lease_with_id(pool, Uuid::new_v4(), tenant, space, age_secs).await
}

/// [`lease`] with the id given.
pub async fn lease_with_id(
    pool: &PgPool,
    id: Uuid,
    tenant: &str,
    space: Uuid,
    age_secs: i64,
) -> Uuid {
    sqlx::query(
        "INSERT INTO knowledge_space_mutation_leases \
           (id, tenant_id, knowledge_space_id, operation, acquired_at) \
         VALUES ($1, $2, $3, 'bulk-upload', now() - $4 * interval '1 second')",
    )
    .bind(id)
    .bind(tenant)
    .bind(space)
    .bind(age_secs)
    .execute(pool)
    .await
    .expect("lease");
    id
}

/// How many audit records the database holds.
pub async fn audit_count(pool: &PgPool) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM bootstrap_console.audit_log")
        .fetch_one(pool)
        .await
        .expect("audit count")
}

/// How many mutation leases the database holds.
pub async fn lease_count(pool: &PgPool) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM knowledge_space_mutation_leases")
        .fetch_one(pool)
        .await
        .expect("lease count")
}

/// A transaction holding the bootstrap's row lock, as a long write or a stalled action would;
/// rolling it back (or dropping it) lets go.
pub async fn hold_row(
    pool: &PgPool,
    bootstrap: Uuid,
) -> sqlx::Transaction<'static, sqlx::Postgres> {
    let mut holder = pool.begin().await.expect("begin");
    sqlx::query("SELECT 1 FROM legacy_space_publication_bootstraps WHERE id = $1 FOR UPDATE")
        .bind(bootstrap)
        .execute(&mut *holder)
        .await
        .expect("the row lock");
    holder
}

/// The outcome column of every audit record, oldest first.
pub async fn audit_outcomes(pool: &PgPool) -> Vec<String> {
    sqlx::query_scalar("SELECT outcome FROM bootstrap_console.audit_log ORDER BY id")
        .fetch_all(pool)
        .await
        .expect("audit outcomes")
}

/// The whole ledger as JSON text, to prove that a refused action wrote nothing.
pub async fn ledger_image(pool: &PgPool) -> String {
    sqlx::query_scalar(
        "SELECT concat_ws('|', \
           (SELECT coalesce(jsonb_agg(to_jsonb(b) ORDER BY id)::text, '') FROM legacy_space_publication_bootstraps b), \
           (SELECT coalesce(jsonb_agg(to_jsonb(i) ORDER BY bootstrap_id, ordinal)::text, '') FROM legacy_space_publication_bootstrap_items i), \
           (SELECT coalesce(jsonb_agg(to_jsonb(l) ORDER BY id)::text, '') FROM knowledge_space_mutation_leases l), \
           (SELECT count(*)::text FROM bootstrap_console.audit_log))",
    )
    .fetch_one(pool)
    .await
    .expect("ledger image")
}

/// Gives a bootstrap a run state the constraints forbid, as a database whose checks were
/// dropped by hand would let in.
pub async fn force_run_state(pool: &PgPool, bootstrap: Uuid, run_state: &str) {
    sqlx::raw_sql(
        "ALTER TABLE legacy_space_publication_bootstraps \
           DROP CONSTRAINT IF EXISTS legacy_space_bootstraps_run_state_ck, \
           DROP CONSTRAINT IF EXISTS legacy_space_bootstraps_terminal_ck",
    )
    .execute(pool)
    .await
    .expect("drop checks");
    sqlx::query("UPDATE legacy_space_publication_bootstraps SET run_state = $2 WHERE id = $1")
        .bind(bootstrap)
        .bind(run_state)
        .execute(pool)
        .await
        .expect("an impossible row");
}

/// What an operator sees of a bootstrap right now (what an action's decision rests on).
pub async fn seen(
    pool: &PgPool,
    bootstrap: Uuid,
) -> bootstrap_console::domain::actions::SeenBootstrap {
    let mut conn = pool.acquire().await.expect("a connection");
    let row = bootstrap_console::store::read::bootstrap(&mut conn, bootstrap)
        .await
        .expect("read the bootstrap")
        .expect("the bootstrap exists");
    let parsed = bootstrap_console::domain::model::Bootstrap::try_from(row).expect("a valid row");
    bootstrap_console::domain::actions::SeenBootstrap::from(&parsed)
}
