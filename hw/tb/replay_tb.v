`default_nettype none
// replay_tb: replays recorded runs on the chip and compares them with their expected results,
// with no Python at run time. Works on Icarus Verilog and on Verilator (--binary --timing).
//
// Usage (Icarus, then Verilator):
//   $ iverilog -g2012 -s replay_tb -o replay.vvp hw/tb/replay_tb.v hw/tb/chip_harness.v \
//         hw/tb/ext_mem.v hw/rtl/*.v  &&  vvp -n replay.vvp +records=path/to/records.hex
//   $ verilator --binary --timing --top-module replay_tb hw/tb/replay_tb.v hw/tb/chip_harness.v \
//         hw/tb/ext_mem.v hw/rtl/*.v  &&  obj_dir/Vreplay_tb +records=path/to/records.hex
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
//     ERROR ERROR_PC CNT_TOTAL CNT_DMA CNT_MAT CNT_VEC CNT_SM EV_INSTR EV_SAT
//     EV_OPS0 .. EV_OPS7            per-opcode counts, opcode 0 (HALT) first
//     EV_DMA_WORDS EV_SM_MAX_LEN EV_SM_RANGE                               (20 words in all)
//   454E4421                      end marker "END!"
//
// Each record runs on a fresh machine: external memory and SRAM cleared, the image loaded,
// reset, one start pulse, then up to +watchdog cycles for done. A record that differs prints one
// line starting "MISMATCH". The last line is exactly one of
//   PASS: <n> records match (memory and all five cycle counters), <total> cycles in total
// (the status words, event counters included, are compared too; the line's text is kept as is)
//   FAIL: <why>
// where <total> is the sum of the records' cnt_total; then $finish.
`ifndef REPLAY_RECORDS
`define REPLAY_RECORDS "records.hex"
`endif

module replay_tb #(
    parameter ARRAY_N    = 4,        // chip_top parameters, see hw/ISA.md
    parameter K_MAX      = 64,
    parameter SRAM_WORDS = 4096,
    parameter EXT_WORDS  = 16384,
    parameter EXT_LAT    = 2,
    parameter SM_MAX     = 256
);

localparam [31:0] MAGIC      = 32'h5250_4C59;
localparam [31:0] END_MARKER = 32'h454E_4421;
localparam N_STATUS   = 20;                   // expected status words per record

reg         clk;
reg         rst;
reg         start;

initial begin
    clk   = 1'b0;
    rst   = 1'b1;
    start = 1'b0;
end

wire        busy, done;
wire [3:0]  error;
wire [15:0] error_pc;
wire [31:0] cnt_total, cnt_dma, cnt_mat, cnt_vec, cnt_sm, ev_instr, ev_sat;
wire [127:0] ev_ops;
wire [31:0] ev_dma_words;
wire [15:0] ev_sm_max_len;
wire [7:0]  ev_sm_range;
wire        mem_req, mem_we, mem_rvalid;
wire [15:0] mem_addr;
wire [31:0] mem_wdata, mem_rdata;

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
    .cnt_total  (cnt_total),
    .cnt_dma    (cnt_dma),
    .cnt_mat    (cnt_mat),
    .cnt_vec    (cnt_vec),
    .cnt_sm     (cnt_sm),
    .ev_instr   (ev_instr),
    .ev_sat     (ev_sat),
    .ev_ops        (ev_ops),
    .ev_dma_words  (ev_dma_words),
    .ev_sm_max_len (ev_sm_max_len),
    .ev_sm_range   (ev_sm_range),
    .mem_req    (mem_req),
    .mem_we     (mem_we),
    .mem_addr   (mem_addr),
    .mem_wdata  (mem_wdata),
    .mem_rvalid (mem_rvalid),
    .mem_rdata  (mem_rdata)
);

always #5 clk = !clk;

// the harness's observation ports are not needed here
wire unused_ports = &{1'b0, busy, mem_req, mem_we, mem_addr, mem_wdata, mem_rvalid, mem_rdata};

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
integer       n_pass;
integer       n_fail;
reg [63:0]    total_cycles;
integer       watchdog;
reg [8*512-1:0] records_path;

reg [31:0]    seg_addr, seg_count, n_segs, word, expected;
reg [31:0]    want [0:N_STATUS-1];
reg [31:0]    got  [0:N_STATUS-1];
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
        mem_bad = 0;
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

task read_status;
    begin
        for (w = 0; w < N_STATUS; w = w + 1) begin
            want[w] = next_word(0);
        end
        got[0] = {28'd0, error};
        got[1] = {16'd0, error_pc};
        got[2] = cnt_total;
        got[3] = cnt_dma;
        got[4] = cnt_mat;
        got[5] = cnt_vec;
        got[6] = cnt_sm;
        got[7] = ev_instr;
        got[8] = ev_sat;
        for (w = 0; w < 8; w = w + 1) begin
            got[9 + w] = {16'd0, ev_ops[16 * w +: 16]};
        end
        got[17] = ev_dma_words;
        got[18] = {16'd0, ev_sm_max_len};
        got[19] = {24'd0, ev_sm_range};
    end
endtask

function [8*13-1:0] status_name;
    input integer index;
    begin
        case (index)
            0: status_name = "error";
            1: status_name = "error_pc";
            2: status_name = "cnt_total";
            3: status_name = "cnt_dma";
            4: status_name = "cnt_mat";
            5: status_name = "cnt_vec";
            6: status_name = "cnt_sm";
            7: status_name = "ev_instr";
            8: status_name = "ev_sat";
            9: status_name = "ev_ops[0]";
            10: status_name = "ev_ops[1]";
            11: status_name = "ev_ops[2]";
            12: status_name = "ev_ops[3]";
            13: status_name = "ev_ops[4]";
            14: status_name = "ev_ops[5]";
            15: status_name = "ev_ops[6]";
            16: status_name = "ev_ops[7]";
            17: status_name = "ev_dma_words";
            18: status_name = "ev_sm_max_len";
            default: status_name = "ev_sm_range";
        endcase
    end
endfunction

task run_record;
    input integer index;
    reg status_bad;
    begin
        clear_memories;
        load_image;
        if (!parse_bad) begin
            run_chip;
            check_memory;
            read_status;
        end
        if (!parse_bad) begin
            status_bad = 1'b0;
            for (w = 0; w < N_STATUS; w = w + 1) begin
                if (got[w] !== want[w]) begin
                    status_bad = 1'b1;
                end
            end
            total_cycles = total_cycles + {32'd0, cnt_total};
            if (timed_out || mem_bad != 0 || status_bad) begin
                n_fail = n_fail + 1;
                $write("MISMATCH record %0d:", index);
                if (timed_out) begin
                    $write(" no done after %0d cycles;", cycles);
                end
                if (mem_bad != 0) begin
                    $write(" %0d memory words differ, first ext[%0d] expected 0x%08h got 0x%08h;",
                           mem_bad, first_addr, first_want, first_got);
                end
                for (w = 0; w < N_STATUS; w = w + 1) begin
                    if (got[w] !== want[w]) begin
                        $write(" %0s expected %0d got %0d;", status_name(w), want[w], got[w]);
                    end
                end
                $write("\n");
            end else begin
                n_pass = n_pass + 1;
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
    n_pass       = 0;
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
        $display("FAIL: cannot open the record file %0s", records_path);
    end else if (next_word(0) !== MAGIC) begin
        $display("FAIL: %0s does not start with the magic word 52504C59", records_path);
    end else begin
        n_records = next_word(0);
        for (r = 0; r < n_records && !parse_bad; r = r + 1) begin
            run_record(r);
        end
        if (!parse_bad && next_word(0) !== END_MARKER) begin
            parse_bad = 1'b1;
        end
        if (parse_bad) begin
            $display("FAIL: the record file is malformed near word %0d (record %0d)", pos, r);
        end else if (n_fail != 0) begin
            $display("FAIL: %0d of %0d records differ, %0d cycles in total", n_fail, n_records,
                     total_cycles);
        end else begin
            $display("PASS: %0d records match (memory and all five cycle counters), %0d cycles in total",
                     n_pass, total_cycles);
        end
    end
    if (opened) begin
        $fclose(fd);
    end
    $finish(0);    // 0: no simulator message after the PASS/FAIL line
end

endmodule

`default_nettype wire
