// A named statement's execution on a pipelined connection (pipeline.ts), leaner than
// node-postgres' own `Query` on the store's hot path. node-postgres sends a Describe with every
// execution and builds the result's row template again from the RowDescription that answers it;
// for a named statement the description never changes while the statement exists, so this
// query sends Describe only until the connection has seen one answered, then reuses it. It is a
// subclass of `Query` because the client's pipeline mode refuses any other submittable. The
// methods it overrides and the connection and result fields it reads are node-postgres 8.23's
// (package.json pins the version); `prepared-query.test.ts` checks them against the library.

import pg from "pg";

/** What a RowDescription set on node-postgres' result, reused for later executions. */
interface Description {
  fields: unknown[];
  parsers: unknown[];
  template: object;
}

/** The part of node-postgres' Connection this query (and a SyncGroup) drives. */
export interface WireConnection {
  stream: { cork?(): void; uncork?(): void };
  bind(config: {
    portal: string;
    statement: string;
    values: unknown[];
    binary: boolean;
    valueMapper: (value: unknown, index: number) => unknown;
  }): void;
  execute(config: { portal: string; rows: undefined }): void;
  sync(): void;
  /** Statements node-postgres has sent a Parse for on this connection, by name. */
  parsedStatements: Record<string, string | undefined>;
  submittedNamedStatements: Record<string, string | undefined>;
}

/** The part of node-postgres' Result this query fills in. */
interface ResultState {
  fields: unknown[];
  _parsers: unknown[];
  _prebuiltEmptyResultObject: object;
}

/** The members of node-postgres' Query this subclass overrides or uses. */
interface QueryInternals {
  name: string;
  text: string;
  values: unknown[];
  callback: Callback;
  rows: undefined;
  _result: ResultState;
  _accumulateRows: unknown;
  prepare(connection: WireConnection): void;
  handleRowDescription(message: unknown): void;
  handleError(error: Error, connection: WireConnection): void;
  _getRows(connection: WireConnection, rows: undefined): void;
}

type Callback = (error: Error | undefined, result: pg.QueryResult) => void;
const BaseQuery = pg.Query as unknown as new (
  text: string,
  values: unknown[],
  callback: Callback,
) => QueryInternals;
const prepareValue = (pg as unknown as { utils: { prepareValue(value: unknown): unknown } }).utils
  .prepareValue;

/** Each connection's described statements, by name; forgotten with the connection. */
const described = new WeakMap<WireConnection, Map<string, Description>>();

export class PreparedQuery extends BaseQuery {
  private connection: WireConnection | null = null;
  /** The description `isDescribedOn` found. */
  private known: Description | null = null;

  /** `text` under `name`, prepared once per connection; `callback` gets the result. */
  constructor(name: string, text: string, values: unknown[], callback: Callback) {
    // Text and values as arguments, not a config object: node-postgres copies a config object
    // property by property, and nothing else would be in it.
    super(text, values, callback);
    this.name = name;
  }

  /**
   * Whether this statement's description is known on `connection`, so no Describe is needed;
   * the query keeps the description it found for its execution, even if an error elsewhere makes
   * the connection forget it meanwhile.
   */
  isDescribedOn(connection: WireConnection): boolean {
    this.known = described.get(connection)?.get(this.name) ?? null;
    return (
      this.known !== null &&
      (connection.parsedStatements[this.name] !== undefined ||
        connection.submittedNamedStatements[this.name] !== undefined)
    );
  }

  override prepare(connection: WireConnection): void {
    this.connection = connection;
    if (!this.isDescribedOn(connection)) {
      super.prepare(connection);
      return;
    }
    if (!this.bindDescribed(connection)) {
      // A value that cannot be serialised: nothing of this query was written, and the Sync's
      // ReadyForQuery completes it in the pipeline's order.
      connection.sync();
      return;
    }
    this._getRows(connection, undefined);
  }

  /**
   * Binds and executes this statement without a Sync, as one part of a SyncGroup, once
   * `isDescribedOn` said yes. False when a value cannot be serialised: nothing was written, and
   * the callback has the error.
   */
  executeInGroup(connection: WireConnection): boolean {
    this.connection = connection;
    if (!this.bindDescribed(connection)) return false;
    connection.execute({ portal: "", rows: undefined });
    return true;
  }

  /** Binds with the known description in place of a RowDescription; false when refused. */
  private bindDescribed(connection: WireConnection): boolean {
    const known = this.known!;
    try {
      connection.bind({
        portal: "",
        statement: this.name,
        values: this.values,
        binary: false,
        valueMapper: prepareValue,
      });
    } catch (error) {
      // node-postgres' own prepare also closes the statement here, which its client still
      // counts as parsed, so every later use on the connection would fail; here it stays
      // prepared.
      this.handleError(error as Error, connection);
      return false;
    }
    const result = this._result;
    result.fields = known.fields;
    result._parsers = known.parsers;
    result._prebuiltEmptyResultObject = known.template;
    // A callback is always set, so every row is kept (node-postgres decides this on the
    // RowDescription, which does not come now).
    this._accumulateRows = true;
    return true;
  }

  override handleRowDescription(message: unknown): void {
    super.handleRowDescription(message);
    const connection = this.connection;
    if (connection === null) return;
    let statements = described.get(connection);
    if (statements === undefined) {
      statements = new Map();
      described.set(connection, statements);
    }
    const result = this._result;
    statements.set(this.name, {
      fields: result.fields,
      parsers: result._parsers,
      template: result._prebuiltEmptyResultObject,
    });
  }

  override handleError(error: Error, connection: WireConnection): void {
    // The statement may have changed (a schema change invalidates its plan): describe it again.
    if (this.connection !== null) described.get(this.connection)?.delete(this.name);
    super.handleError(error, connection);
  }
}
