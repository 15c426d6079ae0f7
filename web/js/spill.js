// "Fits" in words that say where the bytes are: a model that fits only
// because weights, KV cache or activations sit in host memory over a link
// (or in flash) is "fits (spilled: ...)", never a bare "yes".
import { bytes } from './format.js';

// Tier kinds outside device memory (engine/src/names.cc).
const OFF_DEVICE = new Set(['host-link', 'flash']);
const OPERANDS = [['weightsBytes', 'weights'], ['kvCacheBytes', 'KV cache'], ['activationsBytes', 'activations']];

// The operands with bytes in an off-device tier of `hardware` (a Hardware
// message, for its tiers' kinds): [{operand, bytes, tier}], summed per
// operand over such tiers.
export function spills(memory, hardware) {
  const kinds = (hardware && hardware.tiers) || [];
  const out = new Map();
  for (const t of (memory && memory.tiers) || []) {
    const tier = kinds[t.tier];
    if (!tier || !OFF_DEVICE.has(tier.kind)) continue;
    for (const [key, operand] of OPERANDS) {
      const b = t[key] || 0;
      if (b <= 0) continue;
      const s = out.get(operand) || { operand, bytes: 0, tiers: [] };
      s.bytes += b;
      s.tiers.push(t.name);
      out.set(operand, s);
    }
  }
  return [...out.values()];
}

// 'yes', 'NO', 'fits (spilled)' (spilled known only as a flag) or
// 'fits (spilled: weights 14.96 GiB, KV cache 1.000 GiB)'.
export function fitsText(fits, spilled) {
  if (!fits) return 'NO';
  if (spilled === true) return 'fits (spilled)';
  if (!spilled || !spilled.length) return 'yes';
  return `fits (spilled: ${spilled.map((s) => `${s.operand} ${bytes(s.bytes)}`).join(', ')})`;
}

// Where the spilled bytes are, for a tooltip: "weights in host DRAM over ...".
export function spillWhere(spilled) {
  return (spilled || []).map((s) => `${s.operand} in ${[...new Set(s.tiers)].join(', ')}`).join('; ');
}
