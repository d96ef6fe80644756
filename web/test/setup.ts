import { afterEach } from "vitest";
import { cleanup, configure } from "@testing-library/react";

// findBy*/waitFor give up after 20 s, not 1 s: `make test` runs vitest beside the e2e and browser suites on two
// cores, below them in priority, where a Cloudscape page's first render took over 5 s (the Endpoints page's
// Assign button). A test still fails when what it waits for never shows.
configure({ asyncUtilTimeout: 20_000 });

afterEach(() => cleanup());
