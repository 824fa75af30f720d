import {
  GraphQLError,
  getNamedType,
  getNullableType,
  isListType,
  Kind,
  NoSchemaIntrospectionCustomRule,
  type ArgumentNode,
  type DocumentNode,
  type GraphQLSchema,
  type ASTVisitor,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLOutputType,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
  isObjectType,
  isInterfaceType,
  SchemaMetaFieldDef,
  TypeMetaFieldDef,
} from 'graphql';

/**
 * Bounds on what one GraphQL operation may ask for, checked before anything runs, the same over HTTP and
 * graphql-ws. Our schema is shallow: a real cabinet query is at most 5 levels deep and a few hundred
 * fields; the limits leave room for that and for GraphiQL's introspection query, and refuse documents
 * built to amplify work (deep fragment nesting, thousands of aliases, long lists). Depth is a validation
 * rule; cost needs the operation's variables (a list's `limit` is often one), so it is checked once the
 * operation and its variables are known (`operationCostError`).
 */
export const GRAPHQL_LIMITS = {
  /** Deepest field nesting (the standard introspection query needs 13). */
  maxDepth: 15,
  /** Estimated work: each field counts 1, times the sizes of the lists it sits in; each root field more. */
  maxCost: 20_000,
  /** A root field starts its own database work (aliases of one would multiply it). */
  rootFieldCost: 25,
  /** Size assumed for a list whose `limit` is not given: the largest default of any list (usage: 50). */
  assumedListSize: 50,
  /**
   * Size assumed for a list inside another answer that takes no `limit` (a model's groups, a status group's
   * models and history, a summary's breakdowns): parts of one answer, bounded by the operator's data.
   */
  nestedListSize: 10,
  /** The largest `limit` any list accepts (also assumed for a `limit` whose value is not a whole number). */
  maxListSize: 200,
} as const;

function limitError(message: string, node: OperationDefinitionNode, limit: 'depth' | 'cost'): GraphQLError {
  return new GraphQLError(message, { nodes: [node], extensions: { code: 'GRAPHQL_VALIDATION_FAILED', limit } });
}

type Variables = Readonly<Record<string, unknown>> | null | undefined;

/**
 * Walks each operation's selections with fragments expanded (a fragment spread inside itself is already
 * refused by graphql's NoFragmentCycles rule, and the depth bound stops the walk in any case).
 */
function measure(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode, variables: Variables): { depth: number; cost: number } {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const root = operation.operation === 'query' ? schema.getQueryType() : operation.operation === 'mutation' ? schema.getMutationType() : schema.getSubscriptionType();
  let depth = 0;
  let cost = 0;
  const visit = (selectionSet: SelectionSetNode, parentType: GraphQLOutputType | null | undefined, level: number, multiplier: number): void => {
    if (level > GRAPHQL_LIMITS.maxDepth + 1 || cost > GRAPHQL_LIMITS.maxCost) return;
    const named = parentType ? getNamedType(parentType) : undefined;
    const fields = named && (isObjectType(named) || isInterfaceType(named)) ? named.getFields() : {};
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        depth = Math.max(depth, level);
        const field: GraphQLField<unknown, unknown> | undefined = fields[selection.name.value] ?? introspectionField(selection.name.value);
        cost += level === 1 ? GRAPHQL_LIMITS.rootFieldCost : multiplier;
        if (!selection.selectionSet) continue;
        // Introspection reads the schema (fixed, finite) and is refused in production: depth-bounded, not costed.
        const size =
          multiplier === 0 || isIntrospectionRoot(selection.name.value)
            ? 0
            : !field || !isListType(getNullableType(field.type))
              ? 1
              : field.args.some((arg) => arg.name === 'limit') || level === 1
                ? listSize(selection.arguments ?? [], operation, variables)
                : GRAPHQL_LIMITS.nestedListSize;
        visit(selection.selectionSet, field?.type, level + 1, multiplier * size);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const typeName = selection.typeCondition?.name.value;
        visit(selection.selectionSet, typeName ? (schema.getType(typeName) as GraphQLOutputType | undefined) : parentType, level, multiplier);
      } else {
        const fragment = fragments.get(selection.name.value);
        if (fragment) visit(fragment.selectionSet, schema.getType(fragment.typeCondition.name.value) as GraphQLOutputType | undefined, level, multiplier);
      }
    }
  };
  visit(operation.selectionSet, root, 1, 1);
  return { depth, cost };
}

const isIntrospectionRoot = (name: string) => name === '__schema' || name === '__type';

function introspectionField(name: string): GraphQLField<unknown, unknown> | undefined {
  if (name === '__schema') return SchemaMetaFieldDef;
  if (name === '__type') return TypeMetaFieldDef;
  return undefined;
}

/**
 * The list's size from its `limit`: a literal, or the variable's value as sent (its declared default
 * when not sent); without a `limit`, the largest default; anything else, the largest list accepted.
 */
function listSize(args: readonly ArgumentNode[], operation: OperationDefinitionNode, variables: Variables): number {
  const limit = args.find((a) => a.name.value === 'limit')?.value;
  if (!limit) return GRAPHQL_LIMITS.assumedListSize;
  let value: unknown = limit.kind === Kind.INT ? Number(limit.value) : undefined;
  if (limit.kind === Kind.VARIABLE) {
    const name = limit.name.value;
    const sent = variables?.[name];
    const declared = operation.variableDefinitions?.find((d) => d.variable.name.value === name)?.defaultValue;
    if (sent !== undefined && sent !== null) value = sent;
    else if (declared?.kind === Kind.INT) value = Number(declared.value);
    else return GRAPHQL_LIMITS.assumedListSize; // not given: the field's own default applies
  }
  return typeof value === 'number' && Number.isInteger(value) ? Math.max(1, Math.min(value, GRAPHQL_LIMITS.maxListSize)) : GRAPHQL_LIMITS.maxListSize;
}

/** Refuses operations deeper than `maxDepth` before they run (cost waits for the variables). */
export const QueryDepthRule: ValidationRule = (context: ValidationContext): ASTVisitor => ({
  OperationDefinition(operation) {
    const { depth } = measure(context.getSchema(), context.getDocument(), operation, undefined);
    if (depth > GRAPHQL_LIMITS.maxDepth) {
      context.reportError(limitError(`Query is too deep: at most ${GRAPHQL_LIMITS.maxDepth} levels of fields`, operation, 'depth'));
    }
    return false;
  },
});

/** The error for an operation costlier than `maxCost` with these variables, or null. HTTP and graphql-ws both call it. */
export function operationCostError(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode, variables: Variables): GraphQLError | null {
  const { cost } = measure(schema, document, operation, variables);
  if (cost <= GRAPHQL_LIMITS.maxCost) return null;
  return limitError(
    `Query is too costly: at most ${GRAPHQL_LIMITS.maxCost} cost units (a field 1, a root field ${GRAPHQL_LIMITS.rootFieldCost}, each list counted at its limit as sent, ${GRAPHQL_LIMITS.assumedListSize} when none is given, ${GRAPHQL_LIMITS.nestedListSize} for a list inside an answer that takes none)`,
    operation,
    'cost',
  );
}

/** The validation rules added to graphql's own: the limits everywhere, and no introspection in production. */
export function graphqlValidationRules(production: boolean): ValidationRule[] {
  return production ? [QueryDepthRule, NoSchemaIntrospectionCustomRule] : [QueryDepthRule];
}
