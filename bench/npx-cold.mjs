// `node bench/npx-cold.mjs [rounds]`: the npx section of bench/RESULTS.md
// alone (benchNpxCold), for a change to what the package declares, without
// the whole bench. Needs dist/ built (`npm run build`).
import { benchNpxCold, npxColdSection } from './startup.mjs';

const rounds = Number(process.argv[2] ?? 5);
const npx = benchNpxCold({ rounds });
process.stdout.write(`${npxColdSection(npx, process.version).join('\n')}\n`);
