// Drives the upload page's resumable (tus) upload in headless Chromium
// (playwright-core): node resume-test.mjs PAGE_URL FILE PROFILE_DIR
// Chooses FILE, waits for the page to resume after the test's proxy cut the
// first PATCH's connection, reloads the page once the progress bar passes
// 60%, chooses FILE again and waits for completion.
// Prints one JSON line: {"done":true,"status":"…","statuses":[…],"progress":[…]}.
import { chromium } from "playwright-core";

const [url, file, profile] = process.argv.slice(2);
const ctx = await chromium.launchPersistentContext(profile, {
  executablePath: "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  viewport: { width: 800, height: 520 },
});
// watch records every progress value and status text the page shows.
const watch = () => {
  window.__progress = [];
  window.__statuses = [];
  window.__timeline = []; // "ms status" lines, for the failure report
  const t0 = performance.now();
  const bar = document.getElementById("bar");
  const status = document.getElementById("status");
  new MutationObserver(() => window.__progress.push(Number(bar.getAttribute("aria-valuenow"))))
    .observe(bar, { attributes: true, attributeFilter: ["aria-valuenow"] });
  new MutationObserver(() => {
    window.__statuses.push(status.textContent);
    window.__timeline.push(`${Math.round(performance.now() - t0)} ms ${status.textContent} (bar ${bar.getAttribute("aria-valuenow")})`);
  })
    .observe(status, { childList: true, characterData: true, subtree: true });
};
let exitCode = 0;
let page;
try {
  page = ctx.pages()[0] || (await ctx.newPage());
  const resp = await page.goto(url);
  if (!resp || resp.status() !== 200) throw new Error(`page status ${resp && resp.status()}`);
  await page.evaluate(watch);
  await page.setInputFiles("#file", file);
  // The browser's progress counts bytes handed to its socket, which run ahead
  // of what the slow proxy read: wait for the page to have seen the cut and
  // resumed, then for 60% of the file.
  await page.waitForFunction(() => window.__statuses.some((s) => s.includes("connection was lost; resuming")) &&
    Number(document.getElementById("bar").getAttribute("aria-valuenow")) >= 60,
    null, { timeout: 60000, polling: 20 });
  const before = await page.evaluate(() => ({ progress: window.__progress, statuses: window.__statuses }));
  await page.reload();
  await page.evaluate(watch);
  await page.setInputFiles("#file", file);
  await page.waitForFunction(() => document.body.dataset.done === "true" || document.getElementById("status").className === "error",
    null, { timeout: 60000 });
  const status = await page.textContent("#status");
  const done = await page.evaluate(() => document.body.dataset.done === "true");
  const after = await page.evaluate(() => ({ progress: window.__progress, statuses: window.__statuses }));
  console.log(JSON.stringify({ done, status, before, after }));
  if (!done) exitCode = 1;
} catch (e) {
  console.error("FAIL:", e.message);
  // What the page showed on the way, and where it stands, tell a slow
  // upload from one that stopped.
  const seen = await page?.evaluate(() => ({ timeline: window.__timeline,
    bar: document.getElementById("bar").getAttribute("aria-valuenow") })).catch((err) => err.message);
  console.error("page:", JSON.stringify(seen));
  exitCode = 1;
} finally {
  await ctx.close();
}
process.exit(exitCode);
