/** Why a parsed body was refused, or null when its shape is within the limits. */
export function bodyShapeProblem(body: unknown, maxFields: number, maxDepth: number): string | null {
  let fields = 0;
  // Iterative on purpose: a recursive walk is what overflowed the stack on 2,000 levels of `{"a":…}`.
  const stack: { value: unknown; depth: number }[] = [{ value: body, depth: 0 }];
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= maxDepth) return `Request body is nested deeper than ${maxDepth} levels`;
    const children = Array.isArray(value) ? value : Object.values(value);
    fields += children.length;
    if (fields > maxFields) return `Request body has more than ${maxFields} fields`;
    for (const child of children) stack.push({ value: child, depth: depth + 1 });
  }
  return null;
}
