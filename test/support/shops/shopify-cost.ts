import {
  Kind,
  getNamedType,
  getNullableType,
  isListType,
  isObjectType,
  type FragmentDefinitionNode,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { getArgumentValues } from 'graphql/execution/values';

/*
 * Shopify's query cost and its leaky bucket, from "Shopify API rate limits"
 * (https://shopify.dev/docs/api/usage/limits#graphql-admin-api-rate-limits) and "GraphQL Admin API
 * query cost calculation": a scalar or an enum costs 0, an object 1, a connection 2 plus `first`
 * (or `last`) times the cost of each of its nodes, a mutation 10; a query may cost at most 1,000
 * points; the requested cost is taken from the bucket before the query runs and what it did not
 * use (the actual cost counts the nodes returned) is given back; the bucket refills at the
 * plan's restore rate; a query that costs more than what is available answers THROTTLED, and each
 * answer's `extensions.cost` carries `requestedQueryCost`, `actualQueryCost` and `throttleStatus`
 * `{ maximumAvailable, currentlyAvailable, restoreRate }`.
 */

export const SINGLE_QUERY_MAX_COST = 1000;

type Data = Record<string, unknown> | null | undefined;

export class CostError extends Error {}

function selectionCost(
  schema: GraphQLSchema,
  set: SelectionSetNode | undefined,
  type: GraphQLObjectType,
  variables: Record<string, unknown>,
  fragments: Record<string, FragmentDefinitionNode>,
  data: Data,
): number {
  if (!set) return 0;
  let total = 0;
  for (const sel of set.selections) {
    if (sel.kind === Kind.INLINE_FRAGMENT) {
      total += selectionCost(schema, sel.selectionSet, type, variables, fragments, data);
      continue;
    }
    if (sel.kind === Kind.FRAGMENT_SPREAD) {
      const fragment = fragments[sel.name.value];
      if (fragment) total += selectionCost(schema, fragment.selectionSet, type, variables, fragments, data);
      continue;
    }
    const field = type.getFields()[sel.name.value];
    if (!field) continue;
    const named = getNamedType(field.type);
    if (!isObjectType(named)) continue;
    const value = data ? (data[sel.alias?.value ?? sel.name.value] as unknown) : undefined;
    if (named.name.endsWith('Connection')) {
      const args = getArgumentValues(field, sel, variables);
      const requested = (args.first ?? args.last) as number | undefined;
      if (requested === undefined) throw new CostError(`you must provide one of first or last (${sel.name.value})`);
      if (data === undefined)
        total += 2 + requested * (1 + connectionNodeCost(schema, sel.selectionSet, named, variables, fragments, undefined));
      else {
        const conn = value as { edges?: Array<{ node?: Data }>; nodes?: Data[] } | null | undefined;
        const nodes = conn?.nodes ?? conn?.edges?.map((e) => e.node) ?? [];
        total +=
          2 +
          nodes.reduce<number>((sum, node) => sum + 1 + connectionNodeCost(schema, sel.selectionSet, named, variables, fragments, node), 0);
      }
    } else if (isListType(getNullableType(field.type))) {
      const items = Array.isArray(value) ? (value as Data[]) : null;
      const args = getArgumentValues(field, sel, variables);
      if (items) for (const item of items) total += 1 + selectionCost(schema, sel.selectionSet, named, variables, fragments, item);
      else if (data === undefined)
        total +=
          ((args.first as number | undefined) ?? 1) * (1 + selectionCost(schema, sel.selectionSet, named, variables, fragments, undefined));
    } else if (data === undefined || value) {
      total += 1 + selectionCost(schema, sel.selectionSet, named, variables, fragments, value as Data);
    }
  }
  return total;
}

/** The cost of one node of a connection (of what was returned for it, when `node` is given): what is selected under `edges { node }` or `nodes`. */
function connectionNodeCost(
  schema: GraphQLSchema,
  set: SelectionSetNode | undefined,
  connection: GraphQLObjectType,
  variables: Record<string, unknown>,
  fragments: Record<string, FragmentDefinitionNode>,
  node: Data,
): number {
  let cost = 0;
  for (const sel of set?.selections ?? []) {
    if (sel.kind !== Kind.FIELD) continue;
    const nodeType = getNamedType(connection.getFields().nodes!.type) as GraphQLObjectType;
    if (sel.name.value === 'nodes') cost = Math.max(cost, selectionCost(schema, sel.selectionSet, nodeType, variables, fragments, node));
    if (sel.name.value === 'edges') {
      for (const inner of sel.selectionSet?.selections ?? []) {
        if (inner.kind === Kind.FIELD && inner.name.value === 'node') {
          cost = Math.max(cost, selectionCost(schema, inner.selectionSet, nodeType, variables, fragments, node));
        }
      }
    }
  }
  return cost;
}

/** The cost of an operation: before it runs (`data` undefined) or of what it returned. */
export function queryCost(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: Record<string, FragmentDefinitionNode>,
  variables: Record<string, unknown>,
  data?: Record<string, unknown> | null,
): number {
  if (operation.operation === 'mutation') return 10 * operation.selectionSet.selections.length;
  return selectionCost(schema, operation.selectionSet, schema.getQueryType()!, variables, fragments, data === null ? {} : data);
}

export interface ThrottleStatus {
  maximumAvailable: number;
  currentlyAvailable: number;
  restoreRate: number;
}

/** The leaky bucket of one shop and app. */
export class CostBucket {
  private available: number;
  private at = Date.now();

  constructor(
    readonly maximumAvailable = 2000,
    readonly restoreRate = 100,
  ) {
    this.available = maximumAvailable;
  }

  private refill(): void {
    const now = Date.now();
    this.available = Math.min(this.maximumAvailable, this.available + ((now - this.at) / 1000) * this.restoreRate);
    this.at = now;
  }

  /** Takes `cost` points if they are there. */
  take(cost: number): boolean {
    this.refill();
    if (cost > this.available) return false;
    this.available -= cost;
    return true;
  }

  giveBack(points: number): void {
    this.refill();
    this.available = Math.min(this.maximumAvailable, this.available + points);
  }

  /** Empties the bucket (a test's way to make the next query wait). */
  drain(): void {
    this.refill();
    this.available = 0;
  }

  status(): ThrottleStatus {
    this.refill();
    return { maximumAvailable: this.maximumAvailable, currentlyAvailable: Math.floor(this.available), restoreRate: this.restoreRate };
  }
}
