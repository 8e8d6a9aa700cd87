/**
 * Sets environment variables for a test file and returns what puts them back as they were (a variable
 * that was unset is deleted again), so one file's settings never leak into the next file of the same worker.
 */
export function setEnv(vars: Record<string, string>): () => void {
  const before = Object.keys(vars).map((name) => [name, process.env[name]] as const);
  Object.assign(process.env, vars);
  return () => {
    for (const [name, value] of before) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}
