// The query behind listSessions: filters (project, agent, status, labels, waiting for a person)
// and keyset pagination on (created_at, id), newest first.

import type { SessionFilter } from "@opencomputer/runtime";

export function sessionListQuery(filter: SessionFilter): { sql: string; params: unknown[] } {
  let sql = "SELECT * FROM sessions WHERE 1 = 1";
  const params: unknown[] = [];
  if (filter.projectId !== undefined) {
    sql += " AND project_id = ?";
    params.push(filter.projectId);
  }
  if (filter.agentId !== undefined) {
    sql += " AND agent_id = ?";
    params.push(filter.agentId);
  }
  if (filter.status !== undefined) {
    sql += " AND status = ?";
    params.push(filter.status);
  }
  if (filter.waiting === true) {
    sql +=
      " AND (question <> 'null' OR EXISTS (SELECT 1 FROM approvals AS a" +
      " WHERE a.session_id = sessions.id AND a.status IN ('pending', 'unconfirmed')))";
  }
  if (filter.cursor !== undefined) {
    sql += " AND (created_at, id) < (?, ?)";
    params.push(filter.cursor.createdAt, filter.cursor.id);
  }
  if (filter.labels !== undefined) {
    for (const [key, value] of Object.entries(filter.labels)) {
      sql +=
        " AND EXISTS (SELECT 1 FROM json_each(sessions.labels) AS l" +
        " WHERE l.key = ? AND l.type = 'text' AND l.value = ?)";
      params.push(key, value);
    }
  }
  sql += " ORDER BY created_at DESC, id DESC LIMIT ?";
  params.push(Math.max(0, filter.limit));
  return { sql, params };
}
