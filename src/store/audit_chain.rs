//! Reading the audit log's hash chain back (console schema unit 0004 writes it).
//!
//! The chain is recomputed here from each record's stored fields, with the expression written
//! out in this query rather than by calling the database's own `audit_record_hash()`, and with
//! every function named in `pg_catalog`: neither a replaced function nor a look-alike planted
//! earlier on the search path can make a changed record look intact.

use sqlx::PgConnection;

use super::StoreError;

/// One record's place in the chain, with its hash as stored and as recomputed now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub(crate) id: i64,
    pub(crate) seq: i64,
    pub(crate) prev_hash: Option<Vec<u8>>,
    pub(crate) hash: Vec<u8>,
    pub(crate) recomputed: Vec<u8>,
}

/// A record of the chain: its id, its place and its hash (the last one is the chain's head).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainHead {
    pub id: i64,
    pub seq: i64,
    pub hash: Vec<u8>,
}

/// The hashed form of record `r`, as unit 0004's `audit_record_hash(r, r.prev_hash)` has it.
const RECOMPUTED: &str = "pg_catalog.sha256(pg_catalog.convert_to(pg_catalog.jsonb_build_array( \
    pg_catalog.encode(r.prev_hash, 'hex'), r.id, \
    pg_catalog.to_char(r.at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), \
    r.db_role, r.actor, r.host, r.ssh_client, r.action, r.tenant_id, r.knowledge_space_id, \
    r.bootstrap_id, r.lease_id, r.request_id, r.action_id, r.reason, \
    r.row_before, r.row_after, r.outcome)::text, 'UTF8'))";

/// How many records one statement reads: memory stays flat however long the log is.
pub(crate) const PAGE: i64 = 2_000;

#[derive(sqlx::FromRow)]
struct LinkRow {
    id: i64,
    chain_seq: i64,
    prev_hash: Option<Vec<u8>>,
    hash: Vec<u8>,
    recomputed: Vec<u8>,
}

impl From<LinkRow> for Link {
    fn from(row: LinkRow) -> Self {
        Self {
            id: row.id,
            seq: row.chain_seq,
            prev_hash: row.prev_hash,
            hash: row.hash,
            recomputed: row.recomputed,
        }
    }
}

/// The next page of the chain from position `from` (included), in chain order.
pub(crate) async fn links_from(
    conn: &mut PgConnection,
    from: i64,
) -> Result<Vec<Link>, StoreError> {
    let sql = format!(
        "SELECT r.id, r.chain_seq, r.prev_hash, r.hash, {RECOMPUTED} AS recomputed \
         FROM bootstrap_console.audit_log r WHERE r.chain_seq >= $1 \
         ORDER BY r.chain_seq LIMIT $2"
    );
    let rows = crate::store::sql::query_as::<LinkRow>(sqlx::AssertSqlSafe(sql))
        .bind(from)
        .bind(PAGE)
        .fetch_all(&mut *conn)
        .await?;
    Ok(rows.into_iter().map(Link::from).collect())
}

/// The record whose hash is `hash`, if one is — its id, position and predecessor's hash:
/// where a record's predecessor went.
pub(crate) async fn record_with_hash(
    conn: &mut PgConnection,
    hash: &[u8],
) -> Result<Option<(i64, i64, Option<Vec<u8>>)>, StoreError> {
    Ok(crate::store::sql::query_as(
        "SELECT id, chain_seq, prev_hash FROM bootstrap_console.audit_log WHERE hash = $1 \
         ORDER BY chain_seq LIMIT 1",
    )
    .bind(hash)
    .fetch_optional(&mut *conn)
    .await?)
}

/// The head the database keeps (`audit_chain_head`), when this role may read it: the last
/// record must be it, or records were removed from the end.
pub(crate) async fn kept_head(
    conn: &mut PgConnection,
) -> Result<Option<(i64, Option<Vec<u8>>)>, StoreError> {
    // Asked first: a statement naming a table this role may not read fails whole.
    let readable: bool = crate::store::sql::query_scalar(
        "SELECT pg_catalog.has_table_privilege('bootstrap_console.audit_chain_head', 'SELECT')",
    )
    .fetch_one(&mut *conn)
    .await?;
    if !readable {
        return Ok(None);
    }
    Ok(crate::store::sql::query_as(
        "SELECT h.chain_seq, h.hash FROM bootstrap_console.audit_chain_head h",
    )
    .fetch_optional(&mut *conn)
    .await?)
}

/// What keeps the log append-only and complete that is not in place now, in words: a chain
/// that verifies says little about a table whose guards are off. The refusal triggers must fire
/// in every session (ALWAYS: a plain `ENABLE TRIGGER` lets replication sessions skip them), no
/// role but the owner may lock or move the chain's head, and none may change, remove, truncate
/// or add triggers to the records (`migrate` revoked every such grant; one given since is
/// named, table-wide or on a column). Nor append them: INSERT is the action functions' owner's
/// alone (console schema unit 0006), and none of those functions is open to PUBLIC. And the
/// log is complete only if no role that may call the action functions (nor PUBLIC) may also
/// write the ledger tables directly.
pub(crate) async fn missing_protections(
    conn: &mut PgConnection,
) -> Result<Vec<String>, StoreError> {
    Ok(crate::store::sql::query_scalar(
        "WITH c_ns AS (SELECT n.oid FROM pg_catalog.pg_namespace n \
                        WHERE n.nspname = 'bootstrap_console'), \
              ledger AS (SELECT oid FROM pg_catalog.pg_class \
                          WHERE oid IN (pg_catalog.to_regclass('legacy_space_publication_bootstraps'), \
                                        pg_catalog.to_regclass('legacy_space_publication_bootstrap_items'), \
                                        pg_catalog.to_regclass('knowledge_space_mutation_leases'))), \
              t AS (SELECT c.oid, c.relkind, c.relrowsecurity FROM pg_catalog.pg_class c \
                     JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
                    WHERE n.nspname = 'bootstrap_console' AND c.relname = 'audit_log'), \
              wanted(name, always) AS (VALUES ('audit_log_chain', false), \
                                              ('audit_log_no_change', true), \
                                              ('audit_log_no_truncate', true)) \
         SELECT 'it is not a plain table' FROM t WHERE t.relkind <> 'r' \
         UNION ALL \
         SELECT 'row-level security is on (rows may be hidden from this role)' \
           FROM t WHERE t.relrowsecurity \
         UNION ALL \
         SELECT CASE WHEN g.tgenabled IS NULL THEN 'trigger ' || w.name || ' is missing' \
                     WHEN g.tgenabled IN ('D', 'R') THEN 'trigger ' || w.name || ' is disabled' \
                     ELSE 'trigger ' || w.name || ' fires only in ordinary sessions (replication \
                           sessions skip it): ENABLE ALWAYS it' END \
           FROM wanted w CROSS JOIN t \
           LEFT JOIN pg_catalog.pg_trigger g ON g.tgrelid = t.oid AND g.tgname = w.name \
          WHERE g.tgenabled IS NULL OR g.tgenabled IN ('D', 'R') \
             OR (w.always AND g.tgenabled <> 'A') \
         UNION ALL \
         SELECT 'role ' || CASE WHEN a.grantee = 0 THEN 'PUBLIC' \
                                ELSE pg_catalog.pg_get_userbyid(a.grantee)::text END \
                || ' holds ' || a.privilege_type || ' on the chain''s head' \
           FROM pg_catalog.pg_class c, pg_catalog.aclexplode(c.relacl) a \
          WHERE c.oid = pg_catalog.to_regclass('bootstrap_console.audit_chain_head') \
            AND a.grantee <> c.relowner AND a.privilege_type <> 'SELECT' \
         UNION ALL \
         SELECT DISTINCT 'role ' || CASE WHEN g.grantee = 0 THEN 'PUBLIC' \
                                ELSE pg_catalog.pg_get_userbyid(g.grantee)::text END \
                || ' holds ' || g.privilege_type || ' on the audit log (only its owner may)' \
           FROM (SELECT a.grantee, a.privilege_type, c.relowner \
                   FROM pg_catalog.pg_class c, pg_catalog.aclexplode(c.relacl) a \
                  WHERE c.oid = pg_catalog.to_regclass('bootstrap_console.audit_log') \
                 UNION ALL \
                 SELECT a.grantee, a.privilege_type, c.relowner \
                   FROM pg_catalog.pg_class c \
                   JOIN pg_catalog.pg_attribute att ON att.attrelid = c.oid \
                   CROSS JOIN pg_catalog.aclexplode(att.attacl) a \
                  WHERE c.oid = pg_catalog.to_regclass('bootstrap_console.audit_log')) g \
          WHERE g.grantee <> g.relowner \
            AND (g.privilege_type IN ('UPDATE', 'DELETE', 'TRUNCATE', 'TRIGGER', 'REFERENCES', \
                                      'MAINTAIN') \
                 OR (g.privilege_type = 'INSERT' AND g.grantee NOT IN ( \
                       SELECT p.proowner FROM pg_catalog.pg_proc p \
                        WHERE p.pronamespace IN (SELECT oid FROM c_ns) AND p.proname = ANY ($1::text[])))) \
         UNION ALL \
         SELECT 'function bootstrap_console.' || p.proname || ' is open to PUBLIC (any role \
                 may act through it): REVOKE EXECUTE ON FUNCTION bootstrap_console.' \
                || p.proname || ' FROM PUBLIC' \
           FROM pg_catalog.pg_proc p CROSS JOIN pg_catalog.aclexplode( \
                  coalesce(p.proacl, pg_catalog.acldefault('f', p.proowner))) a \
          WHERE p.pronamespace IN (SELECT oid FROM c_ns) AND p.proname = ANY ($1::text[]) \
            AND a.grantee = 0 AND a.privilege_type = 'EXECUTE' \
         UNION ALL \
         SELECT DISTINCT 'role ' || CASE WHEN g.grantee = 0 THEN 'PUBLIC' \
                                ELSE pg_catalog.pg_get_userbyid(g.grantee)::text END \
                || CASE WHEN g.grantee = 0 THEN '' ELSE ' may call the action functions and' END \
                || ' holds ' || g.privilege_type || ' on ' || g.relname \
                || ': it can change the ledger with no audit record (run `bootstrap-console \
                   grants` for it again)' \
           FROM (SELECT a.grantee, a.privilege_type, c.relname::text, c.relowner \
                   FROM pg_catalog.pg_class c, pg_catalog.aclexplode(c.relacl) a \
                  WHERE c.oid IN (SELECT oid FROM ledger) \
                 UNION ALL \
                 SELECT a.grantee, a.privilege_type, c.relname::text, c.relowner \
                   FROM pg_catalog.pg_class c \
                   JOIN pg_catalog.pg_attribute att ON att.attrelid = c.oid \
                   CROSS JOIN pg_catalog.aclexplode(att.attacl) a \
                  WHERE c.oid IN (SELECT oid FROM ledger)) g \
          WHERE g.grantee <> g.relowner \
            AND g.privilege_type IN ('UPDATE', 'DELETE', 'INSERT', 'TRUNCATE') \
            AND (g.grantee = 0 OR EXISTS ( \
                  SELECT 1 FROM pg_catalog.pg_proc p \
                   WHERE p.pronamespace IN (SELECT oid FROM c_ns) \
                     AND p.proname = ANY ($1::text[]) AND p.proowner <> g.grantee \
                     AND pg_catalog.has_function_privilege(g.grantee, p.oid, 'EXECUTE')))",
    )
    .bind(&super::capabilities::ACTION_FUNCTIONS[..])
    .fetch_all(&mut *conn)
    .await?)
}
