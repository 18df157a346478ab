// Where the tests find the package's fixtures and the repository's files: compiled, a test
// runs from clients/ts/dist/test.
import { fileURLToPath } from "node:url";

/** The package directory, clients/ts. */
export const pkgDir = fileURLToPath(new URL("../../", import.meta.url));
/** The repository's root. */
export const repoDir = fileURLToPath(new URL("../../../../", import.meta.url));
