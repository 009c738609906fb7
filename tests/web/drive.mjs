// Opens knut web's page in the system Chromium (headless, playwright-core)
// and waits until the run is over (body[data-done=true]). Prints one JSON
// line: {frames, reconnects, nodes:[{id,status,box:{x,y,w,h}}],
// rows:[{id,status,rows,error}], graph} where box is the node's rect in
// SVG coordinates (to compare with /graph.json) and graph is /graph.json.
// Prints "first-frame" on its own line once a frame was applied (the
// test may restart the server then).
// usage: node drive.mjs URL SCREENSHOT [TIMEOUT_MS]
import { chromium } from "playwright-core";

const [url, shot, timeoutArg] = process.argv.slice(2);
const timeout = Number(timeoutArg || 60000);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(url);
  await page.waitForFunction(() => Number(document.body.dataset.frames || 0) > 0, null, { timeout });
  console.log("first-frame");
  await page.waitForFunction(() => document.body.dataset.done === "true", null, { timeout });
  const result = await page.evaluate(async () => {
    const graph = await (await fetch("/graph.json")).json();
    const nodes = [...document.querySelectorAll("g.node")].map((g) => {
      const r = g.querySelector("rect");
      const m = g.transform.baseVal.consolidate().matrix;
      return { id: g.dataset.id, status: g.dataset.status, seen: g.dataset.seen.split(" "),
               box: { x: m.e, y: m.f, w: r.width.baseVal.value, h: r.height.baseVal.value },
               screen: r.getBoundingClientRect().toJSON() };
    });
    const rows = [...document.querySelectorAll("#rows tbody tr")].map((tr) => ({
      id: tr.dataset.id, status: tr.cells[1].textContent, rows: tr.cells[2].textContent,
      error: tr.cells[6].textContent }));
    return { frames: Number(document.body.dataset.frames || 0),
             reconnects: Number(document.body.dataset.reconnects || 0),
             edges: document.querySelectorAll("g.edge").length, nodes, rows, graph };
  });
  const png = await page.screenshot({ path: shot, fullPage: true });
  // Pixels of the screenshot itself (decoded by the browser): the centre
  // of each node box, and a point of the page's background.
  result.pixels = await page.evaluate(async ({ b64, pts }) => {
    const img = new Image();
    img.src = "data:image/png;base64," + b64;
    await img.decode();
    const c = document.createElement("canvas");
    c.width = img.width; c.height = img.height;
    const ctx = c.getContext("2d");
    ctx.drawImage(img, 0, 0);
    return { width: img.width, height: img.height,
             at: pts.map(([x, y]) => [...ctx.getImageData(Math.round(x), Math.round(y), 1, 1).data]) };
  }, { b64: png.toString("base64"),
       pts: result.nodes.map((n) => [n.screen.x + n.screen.width - 6,
                                     n.screen.y + n.screen.height - 4]).concat([[3, 895]]) });
  result.errors = errors;
  console.log(JSON.stringify(result));
} finally {
  await browser.close();
}
