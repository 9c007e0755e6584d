// Drives the upload page's sign-in in headless Chromium (playwright-core):
// node login-test.mjs PAGE_URL FILE SCREENSHOT PROFILE_DIR USERNAME PASSWORD
// Opens PAGE_URL, which redirects to the authorization server's login page;
// signs in there with the form; comes back to the upload page, chooses FILE
// with its picker and waits for the page to report completion. Prints one
// JSON line: {"loginPage":"…","done":true,"status":"…","cookies":[…],
// "scriptSeesLogin":false}.
import { chromium } from "playwright-core";

const [url, file, shot, profile, username, password] = process.argv.slice(2);
const ctx = await chromium.launchPersistentContext(profile, {
  executablePath: "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  viewport: { width: 800, height: 520 },
});
ctx.setDefaultTimeout(30000);
let exitCode = 0;
try {
  const page = ctx.pages()[0] || (await ctx.newPage());
  await page.goto(url);
  // The AS's login form (cmd/mcpblob-testas), not the upload page.
  await page.waitForSelector("#username");
  const loginPage = page.url();
  await page.fill("#username", username);
  await page.fill("#password", password);
  await Promise.all([page.waitForURL(url), page.click("#submit")]);
  await page.waitForSelector("#file", { state: "attached" });
  const cookies = (await ctx.cookies()).map(c =>
    ({ name: c.name, httpOnly: c.httpOnly, secure: c.secure, sameSite: c.sameSite, path: c.path }));
  const scriptSeesLogin = await page.evaluate(() => document.cookie.includes("mcpblob_login"));
  await page.setInputFiles("#file", file);
  await page.waitForFunction(() => document.body.dataset.done === "true" || document.getElementById("status").className === "error",
    null, { timeout: 60000 });
  const status = await page.textContent("#status");
  const done = await page.evaluate(() => document.body.dataset.done === "true");
  await page.screenshot({ path: shot, fullPage: true });
  console.log(JSON.stringify({ loginPage, done, status, cookies, scriptSeesLogin }));
  if (!done) exitCode = 1;
} catch (e) {
  console.error("FAIL:", e.message);
  exitCode = 1;
} finally {
  await ctx.close();
}
process.exit(exitCode);
