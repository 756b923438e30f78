// The query behind listSessions: filters (project, agent, status, labels, waiting for a person)
// and keyset pagination on (created_at, id), newest first.

import type { SessionFilter } from "@opencomputer/runtime";
import { labelIndex } from "./label-index.ts";
import { SESSION_COLUMNS } from "./rows.ts";

export function sessionListQuery(filter: SessionFilter): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const where: string[] = [];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  if (filter.projectId !== undefined) where.push(`project_id = ${param(filter.projectId)}`);
  if (filter.agentId !== undefined) where.push(`agent_id = ${param(filter.agentId)}`);
  if (filter.status !== undefined) where.push(`status = ${param(filter.status)}`);
  if (filter.labels !== undefined && Object.keys(filter.labels).length > 0) {
    where.push(`label_index @> ${param(labelIndex(filter.labels))}::jsonb`);
  }
  if (filter.waiting === true) {
    where.push(
      `(json_typeof(question) <> 'null' OR EXISTS (SELECT 1 FROM approvals AS a
          WHERE a.session_id = sessions.id AND a.status IN ('pending', 'unconfirmed')))`,
    );
  }
  if (filter.cursor !== undefined) {
    // A row comparison, which the (created_at DESC, id DESC) index serves directly.
    where.push(
      `(created_at, id) < (${param(filter.cursor.createdAt)}, ${param(filter.cursor.id)})`,
    );
  }
  const sql = `SELECT ${SESSION_COLUMNS} FROM sessions
       ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
       ORDER BY created_at DESC, id DESC LIMIT ${param(Math.max(0, filter.limit))}`;
  return { sql, params };
}
