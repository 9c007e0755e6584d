// Drives the URL-mode upload page in headless Chromium (playwright-core):
// node page-test.mjs PAGE_URL FILE SCREENSHOT PROFILE_DIR
// Chooses FILE with the page's file picker, records every value the progress
// bar takes, waits for the page to report completion and saves a screenshot.
// Prints one JSON line: {"done":true,"status":"…","progress":[…]}.
import { chromium } from "playwright-core";

const [url, file, shot, profile] = process.argv.slice(2);
const ctx = await chromium.launchPersistentContext(profile, {
  executablePath: "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  viewport: { width: 800, height: 520 },
});
let exitCode = 0;
try {
  const page = ctx.pages()[0] || (await ctx.newPage());
  const resp = await page.goto(url);
  if (!resp || resp.status() !== 200) throw new Error(`page status ${resp && resp.status()}`);
  // Accessibility basics: a labelled picker and a live status region.
  if (!(await page.locator("label[for=file]").count())) throw new Error("file input has no label");
  if ((await page.getAttribute("#status", "aria-live")) !== "polite") throw new Error("status is not a live region");
  await page.evaluate(() => {
    window.__progress = [];
    const bar = document.getElementById("bar");
    new MutationObserver(() => window.__progress.push(Number(bar.getAttribute("aria-valuenow"))))
      .observe(bar, { attributes: true, attributeFilter: ["aria-valuenow"] });
  });
  await page.setInputFiles("#file", file);
  await page.waitForFunction(() => document.body.dataset.done === "true" || document.getElementById("status").className === "error",
    null, { timeout: 60000 });
  const status = await page.textContent("#status");
  const done = await page.evaluate(() => document.body.dataset.done === "true");
  const progress = await page.evaluate(() => window.__progress);
  await page.screenshot({ path: shot, fullPage: true });
  console.log(JSON.stringify({ done, status, progress }));
  if (!done) exitCode = 1;
} catch (e) {
  console.error("FAIL:", e.message);
  exitCode = 1;
} finally {
  await ctx.close();
}
process.exit(exitCode);
