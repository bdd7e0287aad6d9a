// Lists every import cycle among the modules under src/, or exits 0 when there
// is none. Type-only imports count: a cycle of types is still two modules that
// cannot be understood one without the other. TypeScript's own pre-parser
// reads the imports (static, dynamic and `import type`), so no bundler
// dependency graph or extra package is needed.
import ts from 'typescript';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..', 'src');
const files = readdirSync(root, { recursive: true })
  .map(String)
  .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
  .map((file) => join(root, file));
const known = new Set(files);

const edges = new Map();
for (const file of files) {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  const targets = importedFiles
    .map(({ fileName }) => fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => resolve(dirname(file), name.replace(/\.js$/, '.ts')))
    .filter((target) => known.has(target));
  edges.set(file, [...new Set(targets)]);
}

// Tarjan's strongly connected components: every component of more than one
// module (or a module importing itself) holds a cycle.
let index = 0;
const order = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const components = [];
function visit(file) {
  order.set(file, index);
  low.set(file, index++);
  stack.push(file);
  onStack.add(file);
  for (const next of edges.get(file)) {
    if (!order.has(next)) {
      visit(next);
      low.set(file, Math.min(low.get(file), low.get(next)));
    } else if (onStack.has(next)) low.set(file, Math.min(low.get(file), order.get(next)));
  }
  if (low.get(file) === order.get(file)) {
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || edges.get(file).includes(file)) components.push(component);
  }
}
for (const file of files) if (!order.has(file)) visit(file);

const name = (file) => relative(root, file);
if (components.length === 0) {
  console.log(`No import cycles among the ${files.length} modules of src/.`);
} else {
  for (const component of components) console.error(`cycle: ${component.map(name).sort().join(' ↔ ')}`);
  process.exitCode = 1;
}
