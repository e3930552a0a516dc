//! Seeding a rehearsal rollout: tenants × spaces × documents, legacy rows, already-migrated
//! spaces and document writers — then migration 0009 runs and creates the markers itself,
//! exactly as in production.

use chrono::{DateTime, Utc};
use sqlx::{Connection, PgConnection};
use uuid::Uuid;

use super::chance::Rng;
use super::config::SeedConfig;
use crate::domain::model::KNOWN_OPERATIONS;
use crate::store::schema::{self, LEGACY_TABLES, SchemaError};

const TENANT_NAMES: &[&str] = &[
    "acme",
    "globex",
    "initech",
    "umbrella",
    "hooli",
    "stark",
    "wayne",
    "tyrell",
    "cyberdyne",
    "soylent",
    "aperture",
    "wonka",
];

/// A document writer holding a lease when the rollout starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeededWriter {
    pub lease_id: Uuid,
    pub tenant_id: String,
    pub knowledge_space_id: Uuid,
    /// Crashed long before the rollout: its lease is already an orphan.
    pub orphaned: bool,
}

/// What seeding created.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SeedReport {
    pub spaces: u32,
    pub documents: u64,
    pub migrated_spaces: u32,
    /// Bootstrap markers created by migration 0009.
    pub markers: i64,
    pub writers: Vec<SeededWriter>,
}

/// Why seeding failed.
#[derive(Debug, thiserror::Error)]
pub enum SeedError {
    #[error(transparent)]
    Schema(#[from] SchemaError),
    #[error("seeding failed: {0}")]
    Database(#[from] sqlx::Error),
}

struct PlannedSpace {
    id: Uuid,
    tenant: String,
    documents: u32,
    migrated: bool,
    legacy_rows: u32,
}

fn uuid_from(rng: &mut Rng) -> Uuid {
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&rng.next_u64().to_le_bytes());
    bytes[8..].copy_from_slice(&rng.next_u64().to_le_bytes());
    uuid::Builder::from_random_bytes(bytes).into_uuid()
}

fn plan_spaces(config: &SeedConfig, rng: &mut Rng) -> Vec<PlannedSpace> {
    let mut spaces = Vec::new();
    for t in 0..config.tenants {
        let name = TENANT_NAMES[t as usize % TENANT_NAMES.len()];
        let tenant = if t as usize >= TENANT_NAMES.len() {
            format!("{name}-{t}")
        } else {
            name.to_string()
        };
        for _ in 0..config.spaces_per_tenant {
            let documents = if rng.chance(config.empty_share) {
                0
            } else if rng.chance(config.large_share) {
                rng.between(
                    config.large_documents.0.into(),
                    config.large_documents.1.into(),
                ) as u32
            } else {
                rng.between(config.documents.0.into(), config.documents.1.into()) as u32
            };
            let legacy_rows = if rng.chance(config.legacy_share) {
                rng.between(1, 4) as u32
            } else {
                0
            };
            spaces.push(PlannedSpace {
                id: uuid_from(rng),
                tenant: tenant.clone(),
                documents,
                migrated: rng.chance(config.migrated_share),
                legacy_rows,
            });
        }
    }
    spaces
}

/// Seeds platform data into a database that has the platform tables, applies migration 0009
/// and the console schema, and places the document writers' leases.
pub async fn seed(conn: &mut PgConnection, config: &SeedConfig) -> Result<SeedReport, SeedError> {
    let mut rng = Rng::new(config.seed);
    let spaces = plan_spaces(config, &mut rng);
    let mut report = SeedReport::default();

    let mut tx = conn.begin().await?;
    insert_spaces(&mut tx, &spaces).await?;
    for space in &spaces {
        report.spaces += 1;
        report.documents += u64::from(space.documents);
        insert_documents(&mut tx, space, &mut rng).await?;
        insert_legacy_rows(&mut tx, space, &mut rng).await?;
        if space.migrated {
            report.migrated_spaces += 1;
            insert_head(&mut tx, space, &mut rng).await?;
        }
    }
    tx.commit().await?;

    schema::apply_unit(conn, &schema::LEGACY_SPACE_BOOTSTRAP).await?;
    schema::migrate_console(conn).await?;
    let mut tx = conn.begin().await?;
    report.markers =
        crate::store::sql::query_scalar("SELECT count(*) FROM legacy_space_publication_bootstraps")
            .fetch_one(&mut *tx)
            .await?;
    report.writers = place_writers(&mut tx, config, &mut rng).await?;
    tx.commit().await?;
    Ok(report)
}

async fn insert_spaces(
    conn: &mut PgConnection,
    spaces: &[PlannedSpace],
) -> Result<(), sqlx::Error> {
    let ids: Vec<Uuid> = spaces.iter().map(|s| s.id).collect();
    let tenants: Vec<String> = spaces.iter().map(|s| s.tenant.clone()).collect();
    crate::store::sql::query(
        "INSERT INTO knowledge_spaces (id, tenant_id, name) \
         SELECT id, tenant, 'space ' || left(id::text, 8) FROM unnest($1::uuid[], $2::text[]) AS s(id, tenant)",
    )
    .bind(ids)
    .bind(tenants)
    .execute(conn)
    .await?;
    Ok(())
}

async fn insert_documents(
    conn: &mut PgConnection,
    space: &PlannedSpace,
    rng: &mut Rng,
) -> Result<(), sqlx::Error> {
    if space.documents == 0 {
        return Ok(());
    }
    let n = space.documents as usize;
    let mut ids = Vec::with_capacity(n);
    let mut versions = Vec::with_capacity(n);
    let mut hashes = Vec::with_capacity(n);
    let mut sizes = Vec::with_capacity(n);
    for _ in 0..n {
        ids.push(uuid_from(rng));
        versions.push(rng.between(1, 9) as i32);
        hashes.push(format!(
            "{:016x}{:016x}{:016x}{:016x}",
            rng.next_u64(),
            rng.next_u64(),
            rng.next_u64(),
            rng.next_u64()
        ));
        sizes.push(rng.between(2_000, 4_000_000) as i64);
    }
    crate::store::sql::query(
        "INSERT INTO document_assets (id, tenant_id, knowledge_space_id, title, version, sha256, size_bytes) \
         SELECT id, $1, $2, 'document ' || left(id::text, 8), version, sha, size \
         FROM unnest($3::uuid[], $4::int[], $5::text[], $6::bigint[]) AS d(id, version, sha, size)",
    )
    .bind(&space.tenant)
    .bind(space.id)
    .bind(ids)
    .bind(versions)
    .bind(hashes)
    .bind(sizes)
    .execute(conn)
    .await?;
    Ok(())
}

async fn insert_legacy_rows(
    conn: &mut PgConnection,
    space: &PlannedSpace,
    rng: &mut Rng,
) -> Result<(), sqlx::Error> {
    for _ in 0..space.legacy_rows {
        let table = LEGACY_TABLES[rng.between(0, LEGACY_TABLES.len() as u64 - 1) as usize];
        // Migrated spaces keep only generation-stamped rows; the others keep legacy NULLs.
        let generation = space.migrated.then(|| uuid_from(rng));
        let sql = format!(
            "INSERT INTO \"{table}\" (id, tenant_id, knowledge_space_id, publication_generation_id) \
             VALUES ($1, $2, $3, $4)"
        );
        crate::store::sql::query(sqlx::AssertSqlSafe(sql))
            .bind(uuid_from(rng))
            .bind(&space.tenant)
            .bind(space.id)
            .bind(generation)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

async fn insert_head(
    conn: &mut PgConnection,
    space: &PlannedSpace,
    rng: &mut Rng,
) -> Result<(), sqlx::Error> {
    let publication = uuid_from(rng);
    let fingerprint = format!("seed-{:016x}", rng.next_u64());
    crate::store::sql::query(
        "INSERT INTO projection_set_publications (id, tenant_id, knowledge_space_id, fingerprint, document_count) \
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(publication)
    .bind(&space.tenant)
    .bind(space.id)
    .bind(&fingerprint)
    .bind(space.documents as i32)
    .execute(&mut *conn)
    .await?;
    crate::store::sql::query(
        "INSERT INTO projection_set_publication_heads (tenant_id, knowledge_space_id, publication_id, fingerprint, revision) \
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(&space.tenant)
    .bind(space.id)
    .bind(publication)
    .bind(&fingerprint)
    .bind(rng.between(1, 5) as i32)
    .execute(conn)
    .await?;
    Ok(())
}

/// Gives a share of the marked spaces a document writer; some crashed long ago (orphans).
async fn place_writers(
    conn: &mut PgConnection,
    config: &SeedConfig,
    rng: &mut Rng,
) -> Result<Vec<SeededWriter>, sqlx::Error> {
    let marked: Vec<(String, Uuid)> = crate::store::sql::query_as(
        // Spaces a writer may take: not one already held (seeding again adds to a ledger).
        "SELECT b.tenant_id, b.knowledge_space_id FROM legacy_space_publication_bootstraps b \
         WHERE NOT EXISTS (SELECT 1 FROM knowledge_space_mutation_leases l \
           WHERE l.tenant_id = b.tenant_id AND l.knowledge_space_id = b.knowledge_space_id) \
         ORDER BY b.tenant_id, b.knowledge_space_id",
    )
    .fetch_all(&mut *conn)
    .await?;
    let now: DateTime<Utc> = crate::store::sql::query_scalar("SELECT now()")
        .fetch_one(&mut *conn)
        .await?;
    let mut writers = Vec::new();
    for (tenant, space) in marked {
        if !rng.chance(config.writer_share) {
            continue;
        }
        let orphaned = rng.chance(config.orphan_share);
        let age_minutes = if orphaned { rng.between(20, 180) } else { 0 };
        let acquired_at = now - chrono::Duration::minutes(age_minutes as i64);
        let operation =
            KNOWN_OPERATIONS[rng.between(0, KNOWN_OPERATIONS.len() as u64 - 1) as usize];
        let lease_id = uuid_from(rng);
        crate::store::sql::query(
            "INSERT INTO knowledge_space_mutation_leases (id, tenant_id, knowledge_space_id, operation, acquired_at) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(lease_id)
        .bind(&tenant)
        .bind(space)
        .bind(operation)
        .bind(acquired_at)
        .execute(&mut *conn)
        .await?;
        writers.push(SeededWriter {
            lease_id,
            tenant_id: tenant,
            knowledge_space_id: space,
            orphaned,
        });
    }
    Ok(writers)
}
