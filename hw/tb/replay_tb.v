`default_nettype none
`include "chip_defs.vh"
// replay_tb: replays recorded runs on the chip and compares them with their expected results,
// with no Python at run time. Works on Icarus Verilog and on Verilator (--binary --timing).
// sim/replay.py writes the record file, builds this testbench, runs it and reads its result.
//
// Usage (Icarus, then Verilator):
//   $ iverilog -g2012 -I hw/rtl -s replay_tb -o replay.vvp hw/tb/replay_tb.v \
//         hw/tb/chip_harness.v hw/tb/axi_ram.v hw/tb/axi_checker.v hw/rtl/*.v
//   $ vvp -n replay.vvp +records=records.hex
//   $ verilator --binary --timing -Ihw/rtl --top-module replay_tb hw/tb/replay_tb.v \
//         hw/tb/chip_harness.v hw/tb/axi_ram.v hw/tb/axi_checker.v hw/rtl/*.v
//   $ obj_dir/Vreplay_tb +records=records.hex
// The chip parameters are this module's parameters (for example -P replay_tb.EXT_LAT=3 on
// Icarus, -GEXT_LAT=3 on Verilator). Plusargs: +records=<file> (default: the REPLAY_RECORDS
// define, else "records.hex"), +watchdog=<cycles per record> (default 5000000).
//
// Record file: hexadecimal 32-bit words (up to 8 hex digits, no 0x prefix), one per line,
// nothing else (no comments), read one at a time with $fscanf, so its size is not limited.
//
//   52504C59                      magic "RPLY"
//   R                             number of records
//   R records, each:
//     S                           number of initial-image segments
//     S x { ADDR COUNT w0 .. w(COUNT-1) }   ext[ADDR + i] = wi; every other word starts at 0
//     C                           number of checked segments
//     C x { ADDR COUNT w0 .. w(COUNT-1) }   expected final ext[ADDR + i]
//     ERROR ERROR_PC                the expected status
//     COUNTERS_0 .. COUNTERS_(N-1)  the expected counters bus, 32 bits a word, bits [31:0]
//                                   first (N = COUNTER_WORDS below; the bits above COUNTERS_W
//                                   are 0)
//   454E4421                      end marker "END!"
//
// Each record runs on a fresh machine: external memory and SRAM cleared, the image loaded,
// reset, one start pulse, then up to +watchdog cycles for done.
//
// Output: lines of space-separated key=value fields after a first word that names the line,
// for sim/replay.py to read (it names the differing counters from the bus layout):
//   mismatch record=<r> timeout=<0|1> memory_diffs=<n> first_address=<a> memory_want=<hex>
//            memory_got=<hex> error_want=<d> error_got=<d> error_pc_want=<d> error_pc_got=<d>
//            counters_want=<hex> counters_got=<hex> axi_violations=<n>
//       (on one line) for each record that differs (axi_violations: the cycles in which the
//       protocol checker on the AXI4 port saw a rule broken; a record with any differs);
//   result status=<pass|fail> records=<n> failed=<k> cycles=<sum of the records' cnt_total>
//   result status=error reason=<cannot-open|bad-magic>
//   result status=error reason=malformed word=<words read> record=<r>
// The result line comes last, exactly once; then $finish.
`ifndef REPLAY_RECORDS
`define REPLAY_RECORDS "records.hex"
`endif

module replay_tb #(
    parameter ARRAY_N    = `ARRAY_N_DEFAULT,       // chip_top parameters, see hw/ISA.md
    parameter K_MAX      = `K_MAX_DEFAULT,
    parameter SRAM_WORDS = `SRAM_WORDS_DEFAULT,
    parameter EXT_WORDS  = `EXT_WORDS_DEFAULT,
    parameter EXT_LAT    = `EXT_LAT_DEFAULT,
    parameter SM_MAX     = `SM_MAX_DEFAULT
);

localparam [31:0] MAGIC         = `REPLAY_MAGIC;          // chip_defs.vh (model/chip/rtl_defs.py)
localparam [31:0] END_MARKER    = `REPLAY_END_MARKER;
localparam        COUNTER_WORDS = (`COUNTERS_W + 31) / 32;    // words of the counters bus

reg         clk;
reg         rst;
reg         start;

initial begin
    clk   = 1'b0;
    rst   = 1'b1;
    start = 1'b0;
end

wire                     busy, done;
wire [`ERROR_W-1:0]      error;
wire [15:0]              error_pc;
wire [`COUNTERS_W-1:0]   counters;
wire        mem_req, mem_we;
wire [15:0] mem_addr;
wire [31:0] mem_wdata;
wire [31:0] axi_violations, axi_first_cycle;
wire [2:0]  axi_first_channel;
wire [3:0]  axi_first_rule;
wire [6*32-1:0] mem_stalls;

chip_harness #(
    .ARRAY_N    (ARRAY_N),
    .K_MAX      (K_MAX),
    .SRAM_WORDS (SRAM_WORDS),
    .EXT_WORDS  (EXT_WORDS),
    .EXT_LAT    (EXT_LAT),
    .SM_MAX     (SM_MAX)
) u_dut (
    .clk        (clk),
    .rst        (rst),
    .start      (start),
    .busy       (busy),
    .done       (done),
    .error      (error),
    .error_pc   (error_pc),
    .counters   (counters),
    .mem_req    (mem_req),
    .mem_we     (mem_we),
    .mem_addr   (mem_addr),
    .mem_wdata  (mem_wdata),
    .axi_violations    (axi_violations),
    .axi_first_cycle   (axi_first_cycle),
    .axi_first_channel (axi_first_channel),
    .axi_first_rule    (axi_first_rule),
    .mem_stalls        (mem_stalls)
);

always #5 clk = !clk;

// the harness's observation ports are not needed here (the protocol checker $displays a
// violation, and a record whose run broke a rule fails: see run_record)
wire unused_ports = &{1'b0, busy, mem_req, mem_we, mem_addr, mem_wdata, axi_first_cycle,
                      axi_first_channel, axi_first_rule, mem_stalls};

// ---------------------------------------------------------------------------------------------
// the record file, read one word at a time

integer       fd;             // the open record file
integer       pos;            // words read so far
reg           parse_bad;      // the file ran out or holds something that is not a hex word

integer i;

function [31:0] next_word;
    input unused_arg;    // Verilog-2005 functions need an input
    integer n;
    reg [31:0] value;
    begin
        value = 32'd0;
        n = 0;
        if (!parse_bad) begin
            n = $fscanf(fd, "%h", value);
        end
        if (n != 1) begin
            parse_bad = 1'b1;
            value = 32'd0;
        end
        pos = pos + 1;
        next_word = value;
    end
endfunction

// ---------------------------------------------------------------------------------------------
// one record

integer       n_records;
integer       n_fail;
reg [63:0]    total_cycles;
integer       watchdog;
reg [8*512-1:0] records_path;

reg [31:0]    seg_addr, seg_count, n_segs, word, expected;
reg [31:0]    want_error, want_error_pc;
reg [32*COUNTER_WORDS-1:0] want_counters;
integer       seg, w, cycles;
integer       mem_bad;
reg [31:0]    first_addr, first_want, first_got;
reg           timed_out;

task clear_memories;
    begin
        for (i = 0; i < EXT_WORDS; i = i + 1) begin
            u_dut.u_mem.mem[i] = 32'd0;
        end
        for (i = 0; i < SRAM_WORDS; i = i + 1) begin
            u_dut.u_chip.u_sram.mem[i] = 32'd0;
`ifndef FAULT_DETECTION_OFF
            u_dut.u_chip.u_sram.g_parity.par[i] = 1'b0;    // a zero word's parity
`endif
        end
    end
endtask

task load_image;
    begin
        n_segs = next_word(0);
        for (seg = 0; seg < n_segs && !parse_bad; seg = seg + 1) begin
            seg_addr  = next_word(0);
            seg_count = next_word(0);
            if (seg_addr + seg_count > EXT_WORDS) begin
                parse_bad = 1'b1;
            end
            for (w = 0; w < seg_count && !parse_bad; w = w + 1) begin
                word = next_word(0);
                u_dut.u_mem.mem[seg_addr + w] = word;
            end
        end
    end
endtask

task run_chip;
    begin
        @(negedge clk);
        rst = 1'b1;
        repeat (2) @(negedge clk);
        rst = 1'b0;
        @(negedge clk);
        start = 1'b1;
        @(negedge clk);
        start = 1'b0;
        cycles = 0;
        while (!done && cycles < watchdog) begin
            @(negedge clk);
            cycles = cycles + 1;
        end
        timed_out = !done;
    end
endtask

task check_memory;
    begin
        mem_bad    = 0;
        first_addr = 32'd0;
        first_want = 32'd0;
        first_got  = 32'd0;
        n_segs = next_word(0);
        for (seg = 0; seg < n_segs && !parse_bad; seg = seg + 1) begin
            seg_addr  = next_word(0);
            seg_count = next_word(0);
            if (seg_addr + seg_count > EXT_WORDS) begin
                parse_bad = 1'b1;
            end
            for (w = 0; w < seg_count && !parse_bad; w = w + 1) begin
                expected = next_word(0);
                word = u_dut.u_mem.mem[seg_addr + w];
                if (word !== expected) begin
                    if (mem_bad == 0) begin
                        first_addr = seg_addr + w;
                        first_want = expected;
                        first_got  = word;
                    end
                    mem_bad = mem_bad + 1;
                end
            end
        end
    end
endtask

task read_expected_status;
    begin
        want_error    = next_word(0);
        want_error_pc = next_word(0);
        for (w = 0; w < COUNTER_WORDS; w = w + 1) begin
            want_counters[32 * w +: 32] = next_word(0);
        end
    end
endtask

// the status as the record holds it: 32-bit words (the counters taken once the run is over: a
// continuous copy of the bus would follow its every count)
wire [31:0]                got_error    = {{(32 - `ERROR_W){1'b0}}, error};
wire [31:0]                got_error_pc = {16'd0, error_pc};
reg  [32*COUNTER_WORDS-1:0] got_counters;

task run_record;
    input integer index;
    begin
        clear_memories;
        load_image;
        if (!parse_bad) begin
            run_chip;
            check_memory;
            read_expected_status;
        end
        if (!parse_bad) begin
            got_counters = {{(32*COUNTER_WORDS - `COUNTERS_W){1'b0}}, counters};
            total_cycles = total_cycles + {32'd0, counters[`CNT_TOTAL]};
            if (timed_out || mem_bad != 0 || got_error !== want_error || axi_violations != 0 ||
                got_error_pc !== want_error_pc || got_counters !== want_counters) begin
                n_fail = n_fail + 1;
                $write("mismatch record=%0d timeout=%0d memory_diffs=%0d first_address=%0d",
                       index, timed_out, mem_bad, first_addr);
                $write(" memory_want=%h memory_got=%h", first_want, first_got);
                $write(" error_want=%0d error_got=%0d error_pc_want=%0d error_pc_got=%0d",
                       want_error, got_error, want_error_pc, got_error_pc);
                $write(" counters_want=%h counters_got=%h axi_violations=%0d\n", want_counters,
                       got_counters, axi_violations);
            end
        end
    end
endtask

// ---------------------------------------------------------------------------------------------
// main

integer r;
reg     opened;

initial begin
    parse_bad    = 1'b0;
    pos          = 0;
    n_fail       = 0;
    n_records    = 0;
    r            = 0;
    total_cycles = 64'd0;
    if (!$value$plusargs("watchdog=%d", watchdog)) begin
        watchdog = 5000000;
    end
    if (!$value$plusargs("records=%s", records_path)) begin
        records_path = `REPLAY_RECORDS;
    end
    fd = $fopen(records_path, "r");
    opened = (fd != 0);
    if (!opened) begin
        $display("result status=error reason=cannot-open");
    end else if (next_word(0) !== MAGIC) begin
        $display("result status=error reason=bad-magic");
    end else begin
        n_records = next_word(0);
        for (r = 0; r < n_records && !parse_bad; r = r + 1) begin
            run_record(r);
        end
        if (!parse_bad && next_word(0) !== END_MARKER) begin
            parse_bad = 1'b1;
        end
        if (parse_bad) begin
            $display("result status=error reason=malformed word=%0d record=%0d", pos, r);
        end else begin
            $display("result status=%0s records=%0d failed=%0d cycles=%0d",
                     (n_fail == 0) ? "pass" : "fail", n_records, n_fail, total_cycles);
        end
    end
    if (opened) begin
        $fclose(fd);
    end
    $finish(0);    // 0: no simulator message after the result line
end

endmodule

`default_nettype wire
