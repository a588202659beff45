import { describe as group, expect, it } from "vitest";
import { describe, firstLine, register } from "./uploads";

group("a file's start, read in the page", () => {
  it("gives the first line of plain and gzipped reads, and the first bytes", async () => {
    const text = "@M1:1:FC:1:1101:1:1 1:N:0:ACGT\r\nACGT\n+\nIIII\n";
    const plain = await describe("run/a_R1.fastq", new Blob([text]), true);
    expect(plain).toMatchObject({ path: "run/a_R1.fastq", size: text.length, first_line: "@M1:1:FC:1:1101:1:1 1:N:0:ACGT", from_folder: true });
    expect(plain.magic).toEqual([...new TextEncoder().encode(text.slice(0, 8))]);
    const gz = await new Response(new Blob([text.repeat(5000)]).stream().pipeThrough(new CompressionStream("gzip"))).blob();
    const zipped = await describe("a_R1.fastq.gz", gz, false);
    expect(zipped.magic.slice(0, 2)).toEqual([0x1f, 0x8b]);
    expect(zipped.first_line).toBe("@M1:1:FC:1:1101:1:1 1:N:0:ACGT");
    expect(zipped.unreadable).toBeNull();
  });
  it("says why a gzip file's start cannot be read", async () => {
    const broken = await describe("x.fq.gz", new Blob([new Uint8Array([0x1f, 0x8b, 8, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9])]), false);
    expect(broken.unreadable).toBeTruthy();
    expect(broken.first_line).toBeNull();
  });
  it("cuts a first line without an end", () => {
    expect(firstLine(new TextEncoder().encode(">" + "A".repeat(5000)))).toHaveLength(1024);
    expect(firstLine(new Uint8Array())).toBeNull();
  });
  it("keeps a file's path, and gives another file of the same path a folder of its own", () => {
    const a = new File(["@r\nA\n+\nI\n"], "s.fq", { lastModified: 1 });
    const b = new File(["@q\nC\n+\nI\n"], "s.fq", { lastModified: 2 });
    expect(register([{ file: a, path: "s.fq" }])).toEqual(["s.fq"]);
    expect(register([{ file: a, path: "s.fq" }, { file: b, path: "s.fq" }])).toEqual(["s.fq", "2/s.fq"]);
  });
});
