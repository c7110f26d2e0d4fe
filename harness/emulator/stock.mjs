// The scanner firmware in STOCK rp2040js: its own Simulator.execute run loop and its own USBCDC host, nothing
// replaced or wrapped, so that harness/emulator/board.mjs (which runs the CPU and PIO its own way and makes the host
// NAK an OUT request while it has nothing to send) has an independent check. Only the world is added: reeds in the
// diode matrix of the config (GPIO listeners and input levels) and magnets moved at emulated times (clock alarms).
//   node stock.mjs SPEC.json
// SPEC: {uf2, bootrom, image, config, changes: [[delay_us, "place"|"lift", channel], ...] (each delay after the
// previous change's CHG line has reached the host), scan_ms: emulated ms to count scans over at the end}.
// Prints one JSON object per line: {"ev": "line", "t0", "t", "text"} for each line from the chip (first and last
// byte at the host), {"ev": "change", "i", "at", "action", "ch", "t0", "t", "scans"} for each change (when it was
// made, the first and last byte of its CHG line, the starts of the scans since: row 0 driven), then {"ev": "done",
// "t", "scans", "span", "empty_outs", "ins"} after scan_ms more (scans counted and the time from the first to the
// last; OUT requests the host answered with nothing, IN transfers it took, over those scan_ms), all times emulated
// ns since power-on. With "probe": true the image's own main.py runs instead and only lines are printed
// until one starts with "PROBE ".
import fs from 'fs';
import { pathToFileURL } from 'url';

const spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const { bootromB1 } = await import(pathToFileURL(spec.bootrom).href);
// rp2040js from tests/node_modules (spec.rp2040js: its ES module entry), wherever this script lives
const { Simulator, USBCDC, ConsoleLogger, LogLevel } = await import(pathToFileURL(spec.rp2040js).href);
const cfg = spec.config;
const out = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');

const sim = new Simulator();
const mcu = sim.rp2040;
mcu.loadBootrom(bootromB1);
mcu.logger = new ConsoleLogger(LogLevel.Error);
const uf2 = fs.readFileSync(spec.uf2);
for (let off = 0; off + 512 <= uf2.length; off += 512) {
  const dv = new DataView(uf2.buffer, uf2.byteOffset + off, 512);
  if (dv.getUint32(0, true) !== 0x0a324655 || dv.getUint32(4, true) !== 0x9e5d5157) continue;
  mcu.flash.set(uf2.subarray(off + 32, off + 32 + dv.getUint32(16, true)), dv.getUint32(12, true) - 0x10000000);
}
mcu.flash.set(fs.readFileSync(spec.image), 0xa0000); // MicroPython v1.28 RPI_PICO: LittleFS at flash + 640 KiB

// The world: a reed matrix (the only sensing this script models).
const now = () => sim.clock.nanos;
const m = cfg.matrix || { rows: [], cols: [] }; // a probe needs no reeds
const low = cfg.active_low !== false;
const rows = m.rows.map((p) => mcu.gpio[p]);
const cols = m.cols.map((p) => mcu.gpio[p]);
const closed = new Set();
const scanStarts = [];
const recompute = () => {
  for (let c = 0; c < cols.length; c++) {
    let pulled = false;
    for (let r = 0; r < rows.length; r++) {
      const pin = rows[r];
      if (pin.outputEnable && pin.outputValue === !low && closed.has(r * cols.length + c)) pulled = true;
    }
    cols[c].setInputValue(pulled ? !low : low);
  }
};
rows.forEach((pin, r) =>
  pin.addListener((state, old) => {
    if (r === 0 && state !== old && state === (low ? 0 : 1)) scanStarts.push(now());
    recompute();
  }),
);
recompute();

// The host: rp2040js's USBCDC as it comes. Only watched, never changed: how often the chip armed its OUT endpoint and
// the host answered at once with nothing (a real host sends an OUT transaction only when it has data), and how many
// IN transfers reached the host.
// With "host": false no host is plugged in at all (the chip's USB is never enumerated): the CPU's speed under
// rp2040js's own run loop with nothing on USB, which a probe reports in WATCHDOG SCRATCH1 instead of on the port.
const plugged = spec.host !== false;
const cdc = plugged ? new USBCDC(mcu.usbCtrl) : { txFIFO: { itemCount: 0 } };
const usb = { emptyOuts: 0, ins: 0 };
if (plugged) {
  const answerOut = mcu.usbCtrl.onEndpointRead;
  mcu.usbCtrl.onEndpointRead = (endpoint, size) => {
    if (endpoint === cdc.outEndpoint && cdc.txFIFO.itemCount === 0) usb.emptyOuts++;
    answerOut(endpoint, size);
  };
  const seeIn = mcu.usbCtrl.onEndpointWrite;
  mcu.usbCtrl.onEndpointWrite = (endpoint, buffer) => {
    if (endpoint === cdc.inEndpoint) usb.ins++;
    seeIn(endpoint, buffer);
  };
}
let partial = '';
let partialT0 = 0;
const lines = [];
let waiting = null; // [predicate, callback] for the next line
cdc.onSerialData = (buf) => {
  const t = now();
  for (const b of buf) {
    if (!partial) partialT0 = t;
    if (b === 10) {
      const line = { t0: partialT0, t, text: partial.replace(/\r$/, '') };
      partial = '';
      lines.push(line);
      out({ ev: 'line', ...line });
      if (waiting && waiting[0](line.text)) {
        const cb = waiting[1];
        waiting = null;
        cb(line);
      }
    } else partial += String.fromCharCode(b);
  }
};
const after = (ns, fn) => sim.clock.createAlarm(fn).schedule(ns);
const waitLine = (pred, cb) => {
  waiting = [pred, cb];
};

const changes = spec.changes || [];
function step(i) {
  if (i >= changes.length) {
    const from = now();
    const first = scanStarts.length;
    const outs0 = usb.emptyOuts;
    const ins0 = usb.ins;
    after((spec.scan_ms || 1000) * 1e6, () => {
      const starts = scanStarts.slice(first);
      out({ ev: 'done', t: now(), scans: starts.length, span: starts.length > 1 ? starts.at(-1) - starts[0] : 0,
        from, empty_outs: usb.emptyOuts - outs0, ins: usb.ins - ins0 });
      sim.stop();
      process.exit(0);
    });
    return;
  }
  const [delayUs, action, ch] = changes[i];
  after(delayUs * 1000, () => {
    const at = now();
    const firstScan = scanStarts.length;
    if (action === 'place') closed.add(ch);
    else closed.delete(ch);
    recompute();
    const want = `${ch}${action === 'place' ? '+' : '-'}`;
    waitLine((text) => text.startsWith('CHG ') && text.split(' c=')[1]?.split('*')[0].split(',').includes(want),
      (line) => {
        out({ ev: 'change', i, at, action, ch, t0: line.t0, t: line.t, scans: scanStarts.slice(firstScan) });
        step(i + 1);
      });
  });
}

if (spec.probe && !plugged) {
  after((spec.probe_ms || 1500) * 1e6, () => {
    out({ ev: 'probe', t: now(), scratch1: mcu.peripherals[0x40058].scratchData[1] });
    sim.stop();
    process.exit(0);
  });
} else if (spec.probe) {
  waitLine((text) => text.startsWith('PROBE '), () => {
    sim.stop();
    process.exit(0);
  });
} else waitLine((text) => text.startsWith('SNAP '), () => step(0));
mcu.core.PC = 0x10000000;
sim.execute();
