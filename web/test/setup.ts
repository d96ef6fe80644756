import { afterEach } from "vitest";
import { cleanup, configure } from "@testing-library/react";

// findBy*/waitFor give up after 5 s, not 1 s: `make test` runs vitest beside the e2e and browser suites on two
// cores, where a Cloudscape page's first render alone can take over a second. A test still fails when what it waits
// for never shows.
configure({ asyncUtilTimeout: 5000 });

afterEach(() => cleanup());
