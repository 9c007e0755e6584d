// Opens stored active content in headless Chromium (playwright-core) and
// reports, per case, whether the page's script ran:
//   node stored-xss.mjs CASES.json BEACON_URL PROFILE_DIR
// CASES.json is a list of {name, url, method?, headers?, postData?, mode}:
//   real      the server's answer as is (a request Playwright sends for a
//             POST, so resources/stream's raw answer is a navigation too)
//   inline    the server's answer without Content-Disposition, as a client
//             or proxy that drops it would pass it on: only the CSP is left
//   bare      the server's body and Content-Type only (the control: the
//             script must run, or the test could not see it run)
// The stored payloads set document.title to "pwned", fetch BEACON_URL
// (which counts hits: GET BEACON_URL/count) and PUT a blob through /v1 on
// the origin that served them (the Go test looks for it in the store).
// Prints one JSON line: [{"name","download","title","origin","hits","error"}].
import { readFileSync } from "node:fs";
import { chromium } from "playwright-core";

const [casesFile, beacon, profile] = process.argv.slice(2);
const cases = JSON.parse(readFileSync(casesFile, "utf8"));
const ctx = await chromium.launchPersistentContext(profile, {
  executablePath: "/usr/bin/chromium",
  headless: true,
  acceptDownloads: true,
  // Chromium's Local Network Access would block the beacon (another
  // loopback port) on its own; granted, only our headers stand in the way.
  permissions: ["local-network-access"],
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});

const hits = async () => Number(await (await fetch(beacon + "/count")).text());

async function run(c) {
  const page = await ctx.newPage();
  const out = { name: c.name, download: false, title: "", origin: "", hits: 0, error: "" };
  page.on("download", (d) => { out.download = true; d.cancel().catch(() => {}); });
  page.on("console", (m) => console.error(c.name, "console:", m.text())); // on stderr, shown when the test fails
  const before = await hits();
  if (c.mode !== "real" || c.method === "POST") {
    await page.route(c.url, async (route) => {
      const resp = await route.fetch({ method: c.method || "GET", headers: c.headers, postData: c.postData });
      let headers = resp.headers();
      if (c.mode === "inline") delete headers["content-disposition"];
      if (c.mode === "bare") headers = { "content-type": headers["content-type"] };
      await route.fulfill({ status: resp.status(), headers, body: await resp.body() });
    });
  }
  try {
    await page.goto(c.url, { waitUntil: "load", timeout: 15000 });
  } catch (e) {
    out.error = e.message.split("\n")[0];
  }
  await page.waitForTimeout(700); // time for a script, had it run, to set the title and call the beacon
  out.title = await page.title().catch((e) => "title: " + e.message);
  out.origin = await page.evaluate(() => self.origin).catch((e) => "origin: " + e.message);
  out.hits = (await hits()) - before;
  await page.close();
  return out;
}

let exitCode = 0;
try {
  const results = [];
  for (const c of cases) results.push(await run(c));
  console.log(JSON.stringify(results));
} catch (e) {
  console.error("FAIL:", e.message);
  exitCode = 1;
} finally {
  await ctx.close();
}
process.exit(exitCode);
