//! What the simulated workers can do on a database whose platform tables are not ours.
//! Migration 0009 promises only a few columns of the platform's tables (a space's id on
//! `document_assets`, the publication's key and fingerprint); the simulated capture, drift
//! check and publication use more. `simulate --no-seed` finds what is there before it starts,
//! says once what it cannot simulate, and keeps to the rest: without the documents' shape,
//! workers do not capture snapshots (spaces at `pending_snapshot` stay queued) nor check for
//! drift; without the publications' shape, they stop at `verifying`.

use sqlx::PgConnection;

/// The columns the simulated steps write or read, by table.
const DOCUMENTS: (&str, &[&str]) = (
    "document_assets",
    &["id", "tenant_id", "knowledge_space_id", "version", "sha256"],
);
const PUBLICATIONS: [(&str, &[&str]); 2] = [
    (
        "projection_set_publications",
        &[
            "id",
            "tenant_id",
            "knowledge_space_id",
            "fingerprint",
            "document_count",
        ],
    ),
    (
        "projection_set_publication_heads",
        &[
            "tenant_id",
            "knowledge_space_id",
            "publication_id",
            "fingerprint",
            "revision",
            "updated_at",
        ],
    ),
];

/// What the simulated workers may do here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlatformShape {
    /// Capture snapshots from `document_assets`, and check for drift before publishing.
    pub capture: bool,
    /// Write publications and move heads.
    pub publish: bool,
    /// What is missing, one sentence per table.
    pub missing: Vec<String>,
}

impl Default for PlatformShape {
    fn default() -> Self {
        Self {
            capture: true,
            publish: true,
            missing: Vec::new(),
        }
    }
}

impl PlatformShape {
    /// What the platform's tables allow, read from the catalog.
    pub async fn probe(conn: &mut PgConnection) -> Result<Self, sqlx::Error> {
        let mut shape = Self::default();
        // Documents are only read; publications and heads are written.
        let documents = fits(conn, DOCUMENTS, false).await?;
        if let Some(why) = documents {
            shape.capture = false;
            shape.missing.push(why);
        }
        for table in PUBLICATIONS {
            if let Some(why) = fits(conn, table, true).await? {
                shape.publish = false;
                shape.missing.push(why);
            }
        }
        Ok(shape)
    }

    /// What the simulation leaves out, said once at its start (`None`: nothing).
    pub fn notice(&self) -> Option<String> {
        if self.capture && self.publish {
            return None;
        }
        let mut left_out = Vec::new();
        if !self.capture {
            left_out.push(
                "capture snapshots (spaces at pending_snapshot stay queued) nor check for drift",
            );
        }
        if !self.publish {
            left_out.push("publish (the jobs they run stop at verifying, queued)");
        }
        Some(format!(
            "the platform's tables differ from the stand-in ({}): simulated workers will not {}",
            self.missing.join("; "),
            left_out.join(", and not ")
        ))
    }
}

/// `None` when `table` has `columns` (and, when the simulator `writes` it, no other column
/// that must be written); else why not.
async fn fits(
    conn: &mut PgConnection,
    (table, columns): (&str, &[&str]),
    writes: bool,
) -> Result<Option<String>, sqlx::Error> {
    let present: Vec<(String, bool)> = crate::store::sql::query_as(
        // Must be written: not null, with no default, not an identity (a generated column has
        // its expression as a default).
        "SELECT a.attname::text, (a.attnotnull AND NOT a.atthasdef AND a.attidentity = '') \
         FROM pg_attribute a \
         WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped",
    )
    .bind(table)
    .fetch_all(&mut *conn)
    .await?;
    if present.is_empty() {
        return Ok(Some(format!("no table {table}")));
    }
    let lacking: Vec<&str> = columns
        .iter()
        .filter(|c| !present.iter().any(|(name, _)| name == *c))
        .copied()
        .collect();
    let required: Vec<&str> = present
        .iter()
        .filter(|(name, must)| writes && *must && !columns.contains(&name.as_str()))
        .map(|(name, _)| name.as_str())
        .collect();
    Ok(match (lacking.is_empty(), required.is_empty()) {
        (true, true) => None,
        (false, _) => Some(format!("{table} has no {}", lacking.join(", "))),
        (true, false) => Some(format!("{table} requires {}", required.join(", "))),
    })
}
