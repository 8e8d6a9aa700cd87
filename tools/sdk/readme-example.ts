import { readFileSync } from 'node:fs';

/**
 * The first fenced block of a language in a README, which must be the example file as it stands (with
 * the import the package's users write in place of the example's relative one): the README shows exactly
 * what the gates run.
 */
export function readmeExampleDiffers(
  readme: string,
  language: string,
  example: string,
  imports: Record<string, string> = {},
) {
  const text = readFileSync(readme, 'utf8');
  const block = new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(text)?.[1];
  let expected = readFileSync(example, 'utf8');
  for (const [from, to] of Object.entries(imports)) expected = expected.split(from).join(to);
  return block?.trim() === expected.trim()
    ? undefined
    : `${readme}: its ${language} example is not ${example}`;
}
