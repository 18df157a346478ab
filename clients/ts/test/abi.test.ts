// The ABIs the client carries (src/abi.ts) are the contracts' committed artifacts: an entry
// that drifts (a changed parameter, a renamed function, an error gone) fails here.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { bountyEscrowAbi, jobEscrowAbi, rootAnchorAbi, stakeRegistryAbi, suretyHookAbi } from "../src/index.js";
import { repoDir } from "./paths.js";

const copies: [string, readonly unknown[]][] = [
  ["BountyEscrow", bountyEscrowAbi],
  ["StakeRegistry", stakeRegistryAbi],
  ["RootAnchor", rootAnchorAbi],
  ["JobEscrow", jobEscrowAbi],
  ["SuretyHook", suretyHookAbi],
];

for (const [name, abi] of copies) {
  test(`abi: ${name} matches contracts/artifacts/${name}.json`, () => {
    const artifact = JSON.parse(readFileSync(join(repoDir, "contracts/artifacts", `${name}.json`), "utf8")) as { abi: { type: string; name?: string }[] };
    for (const entry of abi as { type: string; name: string }[]) {
      const same = artifact.abi.filter((e) => e.type === entry.type && e.name === entry.name);
      assert.equal(same.length, 1, `${name}.${entry.name}: ${same.length} entries of that name in the artifact`);
      assert.deepEqual(entry, same[0], `${name}.${entry.name} drifted from the artifact (copy it again into src/abi.ts)`);
    }
    const errors = artifact.abi.filter((e) => e.type === "error").map((e) => e.name);
    const mine = (abi as { type: string; name: string }[]).filter((e) => e.type === "error").map((e) => e.name);
    assert.deepEqual(mine.sort(), errors.sort(), `${name}: every custom error is carried, so reverts decode`);
  });
}
