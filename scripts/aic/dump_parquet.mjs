// Prints one aiconfigurator table (.parquet) as JSON lines, for kernel_rows.py.
// Needs hyparquet and hyparquet-compressors from npm (README.md beside this file).
import { asyncBufferFromFile, parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'

if (process.argv.length !== 3) {
  console.error('usage: node dump_parquet.mjs TABLE.parquet > TABLE.jsonl')
  process.exit(2)
}
const file = await asyncBufferFromFile(process.argv[2])
const rows = await parquetReadObjects({ file, compressors })
// int64 columns arrive as BigInt, which JSON cannot write
const plain = (key, value) => (typeof value === 'bigint' ? Number(value) : value)
for (const row of rows) console.log(JSON.stringify(row, plain))
