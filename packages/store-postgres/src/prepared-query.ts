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

/** The part of node-postgres' Connection this query drives. */
interface WireConnection {
  bind(config: {
    portal: string;
    statement: string;
    values: unknown[];
    binary: boolean;
    valueMapper: (value: unknown, index: number) => unknown;
  }): void;
  sync(): void;
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
  values: unknown[];
  rows: undefined;
  _result: ResultState;
  _accumulateRows: unknown;
  hasBeenParsed(connection: WireConnection): boolean;
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

  /** `text` under `name`, prepared once per connection; `callback` gets the result. */
  constructor(name: string, text: string, values: unknown[], callback: Callback) {
    // Text and values as arguments, not a config object: node-postgres copies a config object
    // property by property, and nothing else would be in it.
    super(text, values, callback);
    this.name = name;
  }

  override prepare(connection: WireConnection): void {
    this.connection = connection;
    const known = described.get(connection)?.get(this.name);
    if (known === undefined || !this.hasBeenParsed(connection)) {
      super.prepare(connection);
      return;
    }
    try {
      connection.bind({
        portal: "",
        statement: this.name,
        values: this.values,
        binary: false,
        valueMapper: prepareValue,
      });
    } catch (error) {
      // A value that cannot be serialised: nothing of this query was written, and the Sync's
      // ReadyForQuery completes it in the pipeline's order. node-postgres' own prepare also
      // closes the statement, which its client still counts as parsed, so every later use on
      // the connection would fail; on this path it stays prepared.
      connection.sync();
      this.handleError(error as Error, connection);
      return;
    }
    const result = this._result;
    result.fields = known.fields;
    result._parsers = known.parsers;
    result._prebuiltEmptyResultObject = known.template;
    // A callback is always set, so every row is kept (node-postgres decides this on the
    // RowDescription, which does not come now).
    this._accumulateRows = true;
    this._getRows(connection, undefined);
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
