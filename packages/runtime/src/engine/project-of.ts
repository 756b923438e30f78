import type { SessionRecord } from "../ports/records.ts";

/**
 * Which project each session belongs to, remembered. A session's project is set when it is
 * created and never changes (sessions are not moved or deleted), so a remembered answer is never
 * stale; every scoped API call asks it first, and reading the whole session for it each time
 * was a second store read per request. Bounded: the oldest entries go first.
 */
export class ProjectMemo {
  private readonly projects = new Map<string, string>();

  constructor(
    private readonly read: (sessionId: string) => Promise<SessionRecord>,
    private readonly limit = 10_000,
  ) {}

  /** The session's project; the reader's error (e.g. `not_found`) when it has none. */
  async of(sessionId: string): Promise<string> {
    const known = this.projects.get(sessionId);
    if (known !== undefined) return known;
    const { projectId } = await this.read(sessionId);
    this.remember(sessionId, projectId);
    return projectId;
  }

  remember(sessionId: string, projectId: string): void {
    if (this.projects.has(sessionId)) return;
    if (this.projects.size >= this.limit) {
      const oldest = this.projects.keys().next().value;
      if (oldest !== undefined) this.projects.delete(oldest);
    }
    this.projects.set(sessionId, projectId);
  }
}
