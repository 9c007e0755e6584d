// Drives Uppy (Dashboard and tus plugin, from the npm uppy bundle) in
// headless Chromium (playwright-core) against an upload endpoint's tus URL:
// node uppy-test.mjs PAGE_URL FILE SCREENSHOT PROFILE_DIR
// Adds FILE through the Dashboard's file input (Uppy uploads at once), saves
// a screenshot once a third is sent, reloads the page past 60% (the test's
// proxy has already cut the first PATCH, which Uppy retried from HEAD's
// offset), adds FILE again (Uppy finds the upload it stored in localStorage
// and resumes it) and waits for completion.
// Prints one JSON line: {"done":true,"error":"","before":0.6,"resumedAt":…}.
import { chromium } from "playwright-core";

const [url, file, shot, profile] = process.argv.slice(2);
const ctx = await chromium.launchPersistentContext(profile, {
  executablePath: "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  viewport: { width: 800, height: 480 },
});
const progressAtLeast = (page, v) => page.waitForFunction((v) => window.__progress >= v || document.body.dataset.error,
  v, { timeout: 60000, polling: 20 });
let exitCode = 0;
try {
  const page = ctx.pages()[0] || (await ctx.newPage());
  const resp = await page.goto(url);
  if (!resp || resp.status() !== 200) throw new Error(`page status ${resp && resp.status()}`);
  await page.setInputFiles("input.uppy-Dashboard-input >> nth=0", file);
  await progressAtLeast(page, 0.34);
  await page.screenshot({ path: shot });
  await progressAtLeast(page, 0.6);
  const before = await page.evaluate(() => window.__progress);
  await page.reload();
  await page.setInputFiles("input.uppy-Dashboard-input >> nth=0", file);
  // The first progress Uppy reports after the reload is where it resumed.
  await page.waitForFunction(() => window.__progress > 0, null, { timeout: 60000, polling: 5 });
  const resumedAt = await page.evaluate(() => window.__progress);
  await page.waitForFunction(() => document.body.dataset.done === "true" || document.body.dataset.error,
    null, { timeout: 60000 });
  const done = await page.evaluate(() => document.body.dataset.done === "true");
  const error = await page.evaluate(() => document.body.dataset.error || "");
  console.log(JSON.stringify({ done, error, before, resumedAt }));
  if (!done) exitCode = 1;
} catch (e) {
  console.error("FAIL:", e.message);
  exitCode = 1;
} finally {
  await ctx.close();
}
process.exit(exitCode);
