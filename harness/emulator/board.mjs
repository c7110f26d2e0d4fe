// One FaceDown scanner board, emulated: an RP2040 (rp2040js) running MicroPython and the project's firmware/ from a
// LittleFS image, and the world around the chip: reed switches in a diode matrix or on a 74HC165 chain, MFRC522
// readers behind a decoder (or direct chip selects) with their register set, timer and ISO 14443A tags, and the USB
// host. Driven by harness/emulator/chip.py over stdin/stdout, one JSON object per line:
//   in:  {"id", "op": "rx"|"steps"|"tags"|"stall"|"hang"|"stats"|"leds"|"time"|"quit", ...}
//   out: {"ev": "serial", "t", "hex"} (device -> host bytes), {"ev": "reply", "id", "t", ...}, {"ev": "connected"|"reset", "t"}
// Every "t" is emulated nanoseconds since the first power-on (a watchdog reset keeps counting).
import fs from 'fs';
import readline from 'readline';
import { pathToFileURL } from 'url';

const spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const { bootromB1 } = await import(pathToFileURL(spec.bootrom).href);
// rp2040js from tests/node_modules (spec.rp2040js: its ES module entry), wherever this script lives
const { Simulator, USBCDC, ConsoleLogger, LogLevel } = await import(pathToFileURL(spec.rp2040js).href);
const cfg = spec.config;
const uf2 = fs.readFileSync(spec.uf2);
const image = fs.readFileSync(spec.image);
const FS_OFFSET = 0xa0000; // MicroPython v1.28 RPI_PICO: LittleFS at flash + 640 KiB

function out(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}
function log(text) {
  process.stderr.write(`[board] ${text}\n`);
}

// ---------------------------------------------------------------------------------------------------------------
// The world: state that outlives a reset of the chip.
const world = {
  closed: new Set(), // channels whose reed a magnet closes
  tags: new Map(), // reader -> [Card]
  missing: new Set(spec.missing_readers || []),
  stalled: false, // the USB host has the port open but does not read
  hang: false, // the SPI bus never finishes a transfer (a hung loop; cleared by a reset)
};
let sim = null;
let mcu = null;
let cdc = null;
let base = 0; // emulated ns before the current power-on
const now = () => base + (sim ? sim.clock.nanos : 0);
const stats = { scans: 0, scanTimes: [], spiBytes: 0, maxFields: 0, fieldNanos: 0, resets: 0, reads: 0 };

// ---------------------------------------------------------------------------------------------------------------
// Reeds
const activeLow = cfg.active_low !== false;
const reedLevel = (closed) => (closed ? !activeLow : activeLow);

function wireMatrix(m) {
  const rows = m.rows.map((p) => mcu.gpio[p]);
  const cols = m.cols.map((p) => mcu.gpio[p]);
  const recompute = () => {
    for (let c = 0; c < cols.length; c++) {
      let pulled = false;
      for (let r = 0; r < rows.length; r++) {
        const pin = rows[r];
        const driven = pin.outputEnable && pin.outputValue === !activeLow;
        if (driven && world.closed.has(r * cols.length + c)) pulled = true;
      }
      cols[c].setInputValue(pulled ? !activeLow : activeLow);
    }
  };
  rows.forEach((pin, r) =>
    pin.addListener((state, old) => {
      if (r === 0 && state !== old && state === (activeLow ? 0 : 1)) countScan();
      recompute();
    }),
  );
  recompute();
  return recompute;
}

function wireShiftRegister(s) {
  const chips = Math.ceil(s.count / 8);
  const wired = spec.chain_chips || chips; // the chips actually soldered (a config may disagree)
  const load = mcu.gpio[s.load];
  const clock = mcu.gpio[s.clock];
  const data = mcu.gpio[s.data];
  let reg = [];
  let pos = 0;
  let clk = false;
  let pl = true;
  const latch = () => {
    reg = [];
    for (let k = 0; k < wired * 8; k++) {
      const ch = Math.floor(k / 8) * 8 + 7 - (k % 8);
      reg.push(reedLevel(world.closed.has(ch)));
    }
    pos = 0;
  };
  const show = () => data.setInputValue(pos < reg.length ? reg[pos] : false); // DS of the last chip to ground
  load.addListener(() => {
    const v = load.outputValue;
    if (!v && pl) {
      countScan();
    }
    if (!v) {
      latch();
      show();
    }
    pl = v;
  });
  clock.addListener(() => {
    const v = clock.outputValue;
    if (v && !clk && pl) {
      pos++;
      show();
    }
    clk = v;
  });
  latch();
  show();
  return () => {};
}

function countScan() {
  stats.scans++;
  stats.scanTimes.push(now());
  if (stats.scanTimes.length > 50000) stats.scanTimes.splice(0, 10000);
}

// ---------------------------------------------------------------------------------------------------------------
// ISO 14443A tags and the MFRC522
const BIT_NS = 128 / 13.56e6 * 1e9; // one bit at 106 kbit/s: 9.44 us
const FDT_NS = 1236 / 13.56e6 * 1e9; // frame delay time, PCD end to PICC start: 91 us
const POWERUP_NS = (spec.tag_powerup_us ?? 800) * 1000;

function crcA(bytes) {
  let crc = 0x6363;
  for (const byte of bytes) {
    for (let i = 0; i < 8; i++) {
      const bit = ((byte >> i) & 1) ^ (crc & 1);
      crc >>= 1;
      if (bit) crc ^= 0x8408;
    }
  }
  return [crc & 0xff, crc >> 8];
}

class Card {
  constructor(uidHex) {
    this.uid = Buffer.from(uidHex, 'hex');
    this.state = 'OFF';
    this.level = 1;
  }
  cl(level) {
    const u = [...this.uid];
    let part;
    if (u.length === 4) part = u;
    else if (u.length === 7) part = level === 1 ? [0x88, ...u.slice(0, 3)] : u.slice(3, 7);
    else part = level === 1 ? [0x88, ...u.slice(0, 3)] : level === 2 ? [0x88, ...u.slice(3, 6)] : u.slice(6, 10);
    return [...part, part[0] ^ part[1] ^ part[2] ^ part[3]];
  }
  levels() {
    return this.uid.length === 4 ? 1 : this.uid.length === 7 ? 2 : 3;
  }
  // The answer to one frame (array of bytes, bits in the last byte), or null for silence.
  receive(frame, lastBits) {
    if (this.state === 'OFF') return null;
    const halted = this.state === 'HALT';
    if (lastBits === 7 && frame.length === 1) {
      if (frame[0] === 0x52 || (frame[0] === 0x26 && this.state === 'IDLE')) {
        this.state = 'READY';
        this.level = 1;
        return this.uid.length === 4 ? [0x04, 0x00] : this.uid.length === 7 ? [0x44, 0x00] : [0x84, 0x00];
      }
      return null;
    }
    const sel = [0x93, 0x95, 0x97][this.level - 1];
    if (this.state === 'READY' && frame.length === 2 && frame[0] === sel && frame[1] === 0x20) return this.cl(this.level);
    if (this.state === 'READY' && frame.length === 9 && frame[0] === sel && frame[1] === 0x70) {
      const crc = crcA(frame.slice(0, 7));
      const mine = this.cl(this.level);
      if (crc[0] !== frame[7] || crc[1] !== frame[8] || mine.some((b, i) => b !== frame[2 + i])) {
        this.state = 'IDLE';
        return null;
      }
      let sak;
      if (this.level < this.levels()) {
        this.level++;
        sak = 0x04;
      } else {
        this.state = 'ACTIVE';
        sak = 0x00;
      }
      return [sak, ...crcA([sak])];
    }
    if (this.state === 'ACTIVE' && frame.length === 4 && frame[0] === 0x50 && frame[1] === 0) {
      this.state = 'HALT';
      return null;
    }
    this.state = halted ? 'HALT' : 'IDLE';
    return null;
  }
}

let fieldsOn = 0;

class Reader {
  constructor(k) {
    this.k = k;
    this.fieldSince = null;
    this.reset();
  }
  reset() {
    this.regs = new Uint8Array(64);
    this.regs[0x01] = 0x20;
    this.regs[0x14] = 0x80;
    this.regs[0x11] = 0x3f;
    this.regs[0x37] = 0x92;
    this.fifo = [];
    this.pending = null;
    this.setField(false);
  }
  cards() {
    return world.tags.get(this.k) || [];
  }
  setField(on) {
    const t = now();
    if (on && this.fieldSince === null) {
      this.fieldSince = t;
      fieldsOn++;
      stats.maxFields = Math.max(stats.maxFields, fieldsOn);
      for (const c of this.cards()) c.state = 'OFF';
    } else if (!on && this.fieldSince !== null) {
      stats.fieldNanos += t - this.fieldSince;
      this.fieldSince = null;
      fieldsOn--;
      for (const c of this.cards()) c.state = 'OFF';
    }
  }
  powerCards(t) {
    if (this.fieldSince === null) return;
    for (const c of this.cards()) if (c.state === 'OFF' && t - this.fieldSince >= POWERUP_NS) c.state = 'IDLE';
  }
  timeoutNs() {
    const pre = ((this.regs[0x2a] & 0x0f) << 8) | this.regs[0x2b];
    const reload = (this.regs[0x2c] << 8) | this.regs[0x2d];
    return ((reload + 1) * (2 * pre + 1)) / 13.56e6 * 1e9;
  }
  settle(t) {
    const p = this.pending;
    if (!p) return;
    if (!p.txDone && t >= p.txEnd) {
      p.txDone = true;
      this.regs[0x04] |= 0x40; // TxIRq
    }
    if (t >= p.end) {
      this.pending = null;
      if (p.answer) {
        this.fifo = p.answer;
        this.regs[0x04] |= 0x20; // RxIRq
        this.regs[0x06] = p.coll ? 0x08 : 0;
        this.regs[0x0e] = p.coll ? p.collPos & 0x1f : 0x20;
        this.regs[0x0c] = 0;
      } else {
        this.regs[0x04] |= 0x01; // TimerIRq
      }
    }
  }
  transceive(t) {
    const frame = this.fifo;
    this.fifo = [];
    const lastBits = this.regs[0x0d] & 0x07;
    const bits = lastBits ? 1 + (frame.length - 1) * 9 + lastBits + 2 : frame.length * 9 + 2;
    const txEnd = t + bits * BIT_NS;
    this.powerCards(txEnd);
    const on = (this.regs[0x14] & 0x03) === 0x03;
    const answers = [];
    if (on) {
      for (const c of this.cards()) {
        const a = c.receive(frame, lastBits);
        if (a) answers.push(a);
      }
    }
    stats.reads++;
    if (answers.length === 0) {
      this.pending = { txEnd, end: txEnd + this.timeoutNs(), answer: null };
      return;
    }
    // several tags answer at once: bits that differ collide (the reader sees both, a 1 wins the OR)
    const len = Math.max(...answers.map((a) => a.length));
    const merged = [];
    let collPos = 0;
    let coll = false;
    for (let i = 0; i < len; i++) {
      let or = 0;
      let and = 0xff;
      for (const a of answers) {
        or |= a[i] ?? 0;
        and &= a[i] ?? 0;
      }
      if (or !== and && !coll) {
        coll = true;
        const diff = or ^ and;
        let bit = 0;
        while (!((diff >> bit) & 1)) bit++;
        collPos = i * 8 + bit + 1;
      }
      merged.push(or);
    }
    const end = txEnd + FDT_NS + (len * 9 + 2) * BIT_NS;
    this.pending = { txEnd, end, answer: merged, coll, collPos };
  }
  read(reg, t) {
    this.settle(t);
    switch (reg) {
      case 0x09:
        return this.fifo.length ? this.fifo.shift() : 0;
      case 0x0a:
        return this.fifo.length;
      default:
        return this.regs[reg];
    }
  }
  write(reg, v, t) {
    this.settle(t);
    switch (reg) {
      case 0x01:
        if ((v & 0x0f) === 0x0f) {
          this.reset();
          return;
        }
        this.regs[0x01] = v;
        if ((v & 0x0f) === 0x00) this.pending = null;
        return;
      case 0x04: // ComIrqReg: bit 7 chooses set or clear of the marked bits
        this.regs[0x04] = v & 0x80 ? this.regs[0x04] | (v & 0x7f) : this.regs[0x04] & ~v & 0x7f;
        return;
      case 0x09:
        if (this.fifo.length < 64) this.fifo.push(v);
        return;
      case 0x0a:
        if (v & 0x80) this.fifo = [];
        return;
      case 0x0d:
        this.regs[0x0d] = v & 0x7f;
        if (v & 0x80 && (this.regs[0x01] & 0x0f) === 0x0c) this.transceive(t);
        return;
      case 0x14:
        this.regs[0x14] = v;
        this.setField((v & 0x03) === 0x03);
        return;
      default:
        this.regs[reg] = v;
    }
  }
}

const readers = [];
let selectState = null; // {reader index or -1}

function wireRfid(r) {
  const count = r.readers;
  while (readers.length < count) readers.push(new Reader(readers.length));
  for (const rd of readers) rd.reset();
  const sel = r.select;
  let current = -1; // reader whose NSS is low
  let txn = null;
  const selected = () => {
    if (sel.kind === 'decoder') {
      if (mcu.gpio[sel.enable].outputValue) return -1;
      let k = 0;
      sel.address.forEach((p, i) => {
        if (mcu.gpio[p].outputValue) k |= 1 << i;
      });
      return k < count ? k : -1;
    }
    const low = sel.pins.map((p, i) => (mcu.gpio[p].outputValue ? -1 : i)).filter((i) => i >= 0);
    return low.length === 1 ? low[0] : -1;
  };
  const update = () => {
    const k = selected();
    if (k !== current) {
      current = k;
      txn = k >= 0 ? { k, idx: 0, read: false, reg: 0 } : null;
    }
  };
  const pins = sel.kind === 'decoder' ? [sel.enable, ...sel.address] : sel.pins;
  for (const p of pins) mcu.gpio[p].addListener(update);
  const spi = mcu.spi[r.spi || 0];
  const alarm = sim.clock.createAlarm(() => spi.completeTransmit(pendingRx));
  let pendingRx = 0;
  spi.onTransmit = (byte) => {
    stats.spiBytes++;
    if (world.hang) return; // never completes: the firmware waits for the bus forever
    const t = now();
    let rx = 0;
    if (txn && !world.missing.has(txn.k)) {
      const rd = readers[txn.k];
      if (txn.idx === 0) {
        txn.read = !!(byte & 0x80);
        txn.reg = (byte >> 1) & 0x3f;
      } else if (txn.read) {
        rx = rd.read(txn.reg, t);
        txn.reg = (byte >> 1) & 0x3f;
      } else {
        rd.write(txn.reg, byte, t);
      }
      txn.idx++;
    }
    pendingRx = rx;
    const hz = spi.clockFrequency || 1e6;
    alarm.schedule(Math.round((8 / hz) * 1e9));
  };
  selectState = () => current;
}

// ---------------------------------------------------------------------------------------------------------------
// PIO on the emulated clock, and the station lights' data pin
// rp2040js 1.4.1 steps its PIO 1000 instructions per wall-clock macrotask (setTimeout), unrelated to the emulated
// clock: the clock divider is ignored and an instruction's delay cycles are only added to a counter, so a pin driven
// by PIO changes at emulated times that mean nothing. Here the CPU loop runs the state machines instead: a machine
// executes its next instruction when the system clock reaches the cycle it is due (its own cycles, delays included,
// times its clock divider), and a machine stalled on an empty TX FIFO is parked until the CPU writes the FIFO. Pin
// changes are stamped with the cycle the instruction was due, so a WS2812 waveform has its real widths.
const CPU_NS = 8; // 125 MHz, as rp2040js's Simulator
let sysCycles = 0; // system clock cycles since the first power-on
let pioNext = Infinity; // the earliest cycle a state machine is due
let pioLag = 0; // cycles between the instruction's due time and now, while its pin changes are delivered
const ledEdges = []; // [emulated ns, level] of the lights' data pin
let ledLevel = 0;

const smDiv = (sm) => (sm.clockDivInt || 65536) + sm.clockDivFrac / 256;
const txStalled = (sm) => sm.waiting && (sm.waitType === 3 || sm.waitType === 5) && sm.txFIFO.empty;

function pioSchedule() {
  pioNext = Infinity;
  for (const pio of mcu.pio) {
    if (pio.stopped) continue;
    for (const sm of pio.machines) {
      if (!sm.enabled || sm.parked) continue;
      if (sm.due === undefined) sm.due = sysCycles;
      if (sm.due < pioNext) pioNext = sm.due;
    }
  }
}

function pioTick() {
  for (const pio of mcu.pio) {
    if (pio.stopped) continue;
    for (const sm of pio.machines) {
      if (!sm.enabled || sm.parked) continue;
      if (sm.due === undefined) sm.due = sysCycles;
      while (sm.due <= sysCycles) {
        const before = sm.cycles;
        const at = sm.due;
        sm.step();
        sm.due += Math.max(1, sm.cycles - before) * smDiv(sm);
        pioLag = sysCycles - at;
        pio.checkChangedPins();
        pioLag = 0;
        if (txStalled(sm)) {
          sm.parked = true; // nothing to do until the CPU writes the FIFO (the pin holds its side-set level)
          break;
        }
      }
    }
  }
  pioSchedule();
}

function clockPio() {
  for (const pio of mcu.pio) {
    pio.run = () => {
      pioNext = sysCycles; // enabled by a CTRL write: runs from the next instruction on
    };
    for (const sm of pio.machines) {
      const write = sm.writeFIFO.bind(sm);
      sm.writeFIFO = (value) => {
        const before = sm.cycles;
        write(value); // may end the stall at once (rp2040js pulls the word and finishes the OUT)
        if (sm.parked && !txStalled(sm)) {
          sm.parked = false;
          sm.due = sysCycles + Math.max(1, sm.cycles - before) * smDiv(sm);
          if (sm.due < pioNext) pioNext = sm.due;
        }
      };
    }
  }
  sim.execute = function execute() {
    const core = mcu.core;
    const clock = sim.clock;
    sim.executeTimer = null;
    sim.stopped = false;
    for (let i = 0; i < 1000000 && !sim.stopped; i++) {
      if (core.waiting) {
        let ns = clock.nanosToNextAlarm;
        if (pioNext !== Infinity) ns = Math.min(ns, Math.max(CPU_NS, (pioNext - sysCycles) * CPU_NS));
        clock.tick(ns);
        sysCycles += ns / CPU_NS;
        i += ns / CPU_NS;
      } else {
        const cycles = core.executeInstruction();
        clock.tick(cycles * CPU_NS);
        sysCycles += cycles;
      }
      if (sysCycles >= pioNext) pioTick();
    }
    if (!sim.stopped) sim.executeTimer = setTimeout(() => sim.execute(), 0);
  };
}

function watchLights(lt) {
  const pin = mcu.gpio[lt.pin];
  pin.addListener(() => {
    const v = pin.outputEnable && pin.outputValue ? 1 : 0;
    if (v !== ledLevel) ledEdges.push([now() - pioLag * CPU_NS, v]);
    ledLevel = v;
  });
}

// ---------------------------------------------------------------------------------------------------------------
// The chip and its USB host
function loadFlash() {
  let blocks = 0;
  for (let off = 0; off + 512 <= uf2.length; off += 512) {
    const dv = new DataView(uf2.buffer, uf2.byteOffset + off, 512);
    if (dv.getUint32(0, true) !== 0x0a324655 || dv.getUint32(4, true) !== 0x9e5d5157) continue;
    const addr = dv.getUint32(12, true);
    const size = dv.getUint32(16, true);
    mcu.flash.set(uf2.subarray(off + 32, off + 32 + size), addr - 0x10000000);
    blocks++;
  }
  mcu.flash.set(image, FS_OFFSET);
  return blocks;
}

let recomputeReeds = () => {};
let outWaiting = null; // the chip's pending OUT request, answered when the host has bytes
let scratch = new Uint32Array(8); // WATCHDOG SCRATCH0-7 across a watchdog reset
const held = []; // IN transfers the host has not taken while stalled: [endpoint]
const heldData = [];

function powerOn(reason) {
  if (sim) {
    base += sim.clock.nanos;
    sim.stop();
  }
  for (const rd of readers) rd.setField(false);
  world.hang = false;
  sim = new Simulator();
  mcu = sim.rp2040;
  mcu.loadBootrom(bootromB1);
  mcu.logger = new ConsoleLogger(LogLevel.Error);
  loadFlash();
  const wd = mcu.peripherals[0x40058];
  if (reason === 'wdt') {
    // what a watchdog reset keeps: REASON (machine.reset_cause() == WDT_RESET) and the scratch registers
    wd.reason = 1;
    wd.scratchData.set(scratch);
  }
  let resetting = false;
  wd.onWatchdogTrigger = () => {
    if (resetting) return;
    resetting = true;
    wd.alarm.enable = false;
    wd.timer.enable = false;
    scratch = Uint32Array.from(wd.scratchData);
    stats.resets++;
    out({ ev: 'reset', t: now(), reason: 'wdt' });
    sim.stop();
    setImmediate(() => powerOn('wdt'));
  };
  if (cfg.sensing !== 'rfid') {
    recomputeReeds = cfg.scanner === 'matrix' ? wireMatrix(cfg.matrix) : wireShiftRegister(cfg.shift_register);
  }
  if (cfg.rfid && ['rfid', 'hybrid', 'checkin'].includes(cfg.sensing)) wireRfid(cfg.rfid);
  pioNext = Infinity;
  clockPio();
  if (cfg.lights) watchLights(cfg.lights);
  cdc = new USBCDC(mcu.usbCtrl);
  const usb = mcu.usbCtrl;
  const ready = usb.indicateBufferReady.bind(usb);
  usb.indicateBufferReady = (endpoint, isOut) => {
    if (!isOut && world.stalled && endpoint === cdc.inEndpoint) {
      held.push(endpoint);
      return;
    }
    ready(endpoint, isOut);
  };
  cdc.onDeviceConnected = () => out({ ev: 'connected', t: now() });
  // rp2040js's host answers an OUT request at once, with an empty packet when it has nothing to send; a real host
  // NAKs until it has data. Without this the chip handles tens of thousands of empty packets per second.
  const answerOut = usb.onEndpointRead;
  outWaiting = null;
  usb.onEndpointRead = (endpoint, size) => {
    if (endpoint === cdc.outEndpoint && cdc.txFIFO.itemCount === 0) {
      outWaiting = () => answerOut(endpoint, size);
      return;
    }
    answerOut(endpoint, size);
  };
  cdc.onSerialData = (buf) => {
    if (world.stalled) heldData.push(Buffer.from(buf));
    else out({ ev: 'serial', t: now(), hex: Buffer.from(buf).toString('hex') });
  };
  held.length = 0;
  heldData.length = 0;
  mcu.core.PC = 0x10000000;
  sim.execute();
}

function unstall() {
  world.stalled = false;
  for (const b of heldData.splice(0)) out({ ev: 'serial', t: now(), hex: b.toString('hex') });
  const usb = mcu.usbCtrl;
  for (const ep of held.splice(0)) {
    usb.buffStatus |= 1 << (ep * 2);
    usb.buffStatusUpdated();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Commands from the test
function setTags(k, uids) {
  const rd = readers[k];
  const cards = uids.map((u) => new Card(u));
  if (uids.length) world.tags.set(k, cards);
  else world.tags.delete(k);
  if (rd) for (const c of cards) c.state = 'OFF'; // powers up with the next field
}

function apply(action, ch, arg) {
  if (action === 'place') world.closed.add(ch);
  else if (action === 'lift') world.closed.delete(ch);
  else if (action === 'tag') setTags(ch, arg || []);
  recomputeReeds();
}

function runSteps(steps, done) {
  // steps: [[delay_us, "place"|"lift", channel] or [delay_us, "tag", reader, [uid, ...]], ...], each delay relative
  // to the previous step, in emulated time
  let i = 0;
  const next = () => {
    while (i < steps.length) {
      const [delay, action, ch, arg] = steps[i];
      if (delay > 0 && !next.waited) {
        next.waited = true;
        const a = sim.clock.createAlarm(() => next());
        a.schedule(delay * 1000);
        return;
      }
      next.waited = false;
      apply(action, ch, arg);
      i++;
    }
    done(now());
  };
  next.waited = false;
  next();
}

function reply(id, extra) {
  out({ ev: 'reply', id, t: now(), ...extra });
}

const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
  if (!line.trim()) return;
  const msg = JSON.parse(line);
  const { id, op } = msg;
  switch (op) {
    case 'rx':
      for (const b of Buffer.from(msg.hex, 'hex')) cdc.sendSerialByte(b);
      if (outWaiting) {
        const answer = outWaiting;
        outWaiting = null;
        answer();
      }
      break;
    case 'steps':
      runSteps(msg.steps, (t) => reply(id, { applied: t }));
      break;
    case 'tags':
      // {reader: [uid hex, ...]}: what lies in each reader's field from now on
      for (const [k, uids] of Object.entries(msg.tags)) setTags(Number(k), uids);
      reply(id, {});
      break;
    case 'stall':
      if (msg.on) world.stalled = true;
      else unstall();
      reply(id, {});
      break;
    case 'hang':
      world.hang = true;
      reply(id, {});
      break;
    case 'stats': {
      const times = stats.scanTimes.slice();
      if (msg.reset) stats.scanTimes.length = 0;
      reply(id, { scans: stats.scans, scan_times: times, spi_bytes: stats.spiBytes, max_fields: stats.maxFields,
        field_ns: stats.fieldNanos, fields_on: fieldsOn, resets: stats.resets, transceives: stats.reads });
      break;
    }
    case 'leds':
      // the lights' data pin since the last call: [[ns, level], ...] (levels alternate, the first is a rise)
      reply(id, { edges: ledEdges.splice(0) });
      break;
    case 'time':
      reply(id, {});
      break;
    case 'quit':
      sim.stop();
      process.exit(0);
      break;
    default:
      reply(id, { error: `unknown op ${op}` });
  }
});
rl.on('close', () => process.exit(0));

powerOn('power');
log(`booted ${spec.uf2} with ${image.length} bytes of LittleFS; sensing ${cfg.sensing}`);
