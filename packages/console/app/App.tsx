import { useMemo, useState } from "react";
import { AgentPage } from "./AgentPage.tsx";
import { AgentsPage } from "./AgentsPage.tsx";
import { type Connection, ConnectionContext, connect, storedKey, storeKey } from "./connection.tsx";
import { NewSession } from "./NewSession.tsx";
import { useRoute } from "./route.ts";
import { SessionPage } from "./SessionPage.tsx";
import { SessionsList } from "./SessionsList.tsx";
import { SignIn } from "./SignIn.tsx";

export function App() {
  const [apiKey, setApiKey] = useState<string | null>(storedKey);
  const connection = useMemo<Connection | null>(
    () =>
      apiKey
        ? connect(apiKey, () => {
            storeKey(null);
            setApiKey(null);
          })
        : null,
    [apiKey],
  );
  if (!connection) {
    return (
      <SignIn
        onSignedIn={(key) => {
          storeKey(key);
          setApiKey(key);
        }}
      />
    );
  }
  return (
    <ConnectionContext.Provider value={connection}>
      <Shell />
    </ConnectionContext.Provider>
  );
}

function Shell() {
  const route = useRoute();
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <a className="brand" href="#/">
          OpenComputer
        </a>
        <nav aria-label="Main">
          <a href="#/" aria-current={route.name === "sessions" ? "page" : undefined}>
            Sessions
          </a>
          <a
            href="#/agents"
            aria-current={route.name === "agents" || route.name === "agent" ? "page" : undefined}
          >
            Agents
          </a>
          <a href="#/new" aria-current={route.name === "new" ? "page" : undefined}>
            New session
          </a>
        </nav>
        <SignOut />
      </header>
      <main id="main" tabIndex={-1}>
        {route.name === "sessions" && <SessionsList key={route.agent ?? ""} agent={route.agent} />}
        {route.name === "agents" && <AgentsPage />}
        {route.name === "agent" && <AgentPage key={route.id} id={route.id} />}
        {route.name === "new" && <NewSession />}
        {route.name === "session" && <SessionPage key={route.id} id={route.id} />}
        {route.name === "unknown" && (
          <p className="empty">
            No such page. <a href="#/">Back to sessions</a>
          </p>
        )}
      </main>
    </div>
  );
}

function SignOut() {
  return (
    <ConnectionContext.Consumer>
      {(c) => (
        <button type="button" className="quiet" onClick={() => c?.signOut()}>
          Sign out
        </button>
      )}
    </ConnectionContext.Consumer>
  );
}
