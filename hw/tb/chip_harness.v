`default_nettype none
`include "chip_defs.vh"
// chip_harness: the cocotb toplevel of the whole chip: chip_top wired to ext_mem.
//
// A test backdoor-loads the external memory (u_mem.mem[i], 32-bit words), pulses start for one
// cycle, awaits done, then reads the counters bus (chip_defs.vh) and the memory. The
// memory port is also brought out, for monitors. The SRAM array is u_chip.u_sram.mem[i]
// (cleared by the testbench when a test starts, verif/kit/bfm.py's power_up).
//
// With `CHIP_HARNESS_CLOCK defined (the cocotb builds of verif/env/launch.py), the harness makes its
// own clock, a 10 ns period (verif/kit/bfm.py's CLOCK_NS), and clk is an internal register, not
// a port: no cocotb callback per clock edge. HDL_CLOCK tells a testbench which way it was built.
// Without the define (replay_tb.v, the smoke test), clk is an input driven from outside.
//
// With `CHIP_HARNESS_RECORD defined (the cocotb builds of verif/env/launch.py, not replay_tb.v),
// the harness also keeps, for the testbench to read after done instead of a Python callback
// per cycle (verif/agents/chip/write_monitor.py, verif/kit/bfm.py):
//   * a write log: every cycle with mem_req and mem_we both 1 (exactly 1: an X or Z strobe
//     writes nothing, as in ext_mem.v) appends {mem_addr, mem_wdata} at the rising edge that
//     ends the cycle (the edge ext_mem.v stores it at) to wlog[wlog_count % WLOG_WORDS], and
//     wlog_count (free-running from reset) counts every write ever made;
//   * a cycle watchdog: watchdog_limit (set by the testbench before start) cycles after start,
//     while done is low, watchdog_expired rises; start clears it.
// HDL_RECORD tells a testbench which way it was built.
module chip_harness #(
    parameter ARRAY_N    = `ARRAY_N_DEFAULT,       // chip_top parameters, see hw/ISA.md
    parameter K_MAX      = `K_MAX_DEFAULT,
    parameter SRAM_WORDS = `SRAM_WORDS_DEFAULT,
    parameter EXT_WORDS  = `EXT_WORDS_DEFAULT,
    parameter EXT_LAT    = `EXT_LAT_DEFAULT,
    parameter SM_MAX     = `SM_MAX_DEFAULT
) (
`ifndef CHIP_HARNESS_CLOCK
    input  wire        clk,
`endif
    input  wire        rst,
    input  wire        start,

    output wire        busy,
    output wire        done,
    output wire [`ERROR_W-1:0] error,
    output wire [15:0] error_pc,
    output wire [`COUNTERS_W-1:0] counters,    // counter X at counters[`X] (hw/ISA.md, "Counters")

    // the external memory port, observed
    output wire        mem_req,
    output wire        mem_we,
    output wire [15:0] mem_addr,
    output wire [31:0] mem_wdata,
    output wire        mem_rvalid,
    output wire [31:0] mem_rdata
);

`ifdef CHIP_HARNESS_CLOCK
localparam [0:0] HDL_CLOCK = 1'b1;
reg clk;
initial clk = 1'b0;
always #5 clk = !clk;    // `timescale 1ns (sim/runner.py's TIMESCALE): 10 ns period
`else
localparam [0:0] HDL_CLOCK = 1'b0;
`endif

// HDL_CLOCK is for the testbench (verif/kit/bfm.py's hdl_clock), not for the HDL
wire unused_hdl_clock = HDL_CLOCK;

`ifdef CHIP_HARNESS_RECORD
localparam [0:0] HDL_RECORD = 1'b1;
localparam WLOG_WORDS = 1024;   // writes kept: the most one run may make (the monitor checks)

reg [47:0] wlog [0:WLOG_WORDS-1];    // {mem_addr, mem_wdata} of each write, in bus order
reg [31:0] wlog_count;
always @(posedge clk) begin
    if (rst) begin
        wlog_count <= 32'd0;
    end else if (mem_req === 1'b1 && mem_we === 1'b1) begin
        wlog[wlog_count % WLOG_WORDS] <= {mem_addr, mem_wdata};
        wlog_count <= wlog_count + 32'd1;
    end
end

reg [31:0] watchdog_limit;
reg [31:0] watchdog_cycles;
reg        watchdog_expired;
initial watchdog_limit = 32'd0;
always @(posedge clk) begin
    if (rst || start) begin
        watchdog_cycles  <= 32'd0;
        watchdog_expired <= 1'b0;
    end else if (done !== 1'b1 && !watchdog_expired) begin
        watchdog_cycles <= watchdog_cycles + 32'd1;
        if (watchdog_cycles + 32'd1 >= watchdog_limit)
            watchdog_expired <= 1'b1;
    end
end
`else
localparam [0:0] HDL_RECORD = 1'b0;
`endif

wire unused_hdl_record = HDL_RECORD;

chip_top #(
    .ARRAY_N    (ARRAY_N),
    .K_MAX      (K_MAX),
    .SRAM_WORDS (SRAM_WORDS),
    .EXT_WORDS  (EXT_WORDS),
    .EXT_LAT    (EXT_LAT),
    .SM_MAX     (SM_MAX)
) u_chip (
    .clk        (clk),
    .rst        (rst),
    .start      (start),
    .busy       (busy),
    .done       (done),
    .error      (error),
    .error_pc   (error_pc),
    .mem_req    (mem_req),
    .mem_we     (mem_we),
    .mem_addr   (mem_addr),
    .mem_wdata  (mem_wdata),
    .mem_rvalid (mem_rvalid),
    .mem_rdata  (mem_rdata),
    .counters   (counters)
);

ext_mem #(
    .WORDS (EXT_WORDS),
    .LAT   (EXT_LAT)
) u_mem (
    .clk    (clk),
    .rst    (rst),
    .req    (mem_req),
    .we     (mem_we),
    .addr   (mem_addr),
    .wdata  (mem_wdata),
    .rvalid (mem_rvalid),
    .rdata  (mem_rdata)
);

endmodule

`default_nettype wire

`ifdef VERILATOR
// What cocotb reaches through VPI (verif/kit/bfm.py, verif/agents/chip/monitor.py), so that a build can drop
// cocotb's global --public-flat-rw, which keeps every signal of the chip and slows the model.
// Waveforms do not depend on this: --trace records every signal either way.
// "*" on chip_harness covers its ports: status, the counters bus, the memory port, and the
// HDL_CLOCK localparam; inside the chip, only the scratchpad's array (cleared by backdoor when
// a test starts, as a new simulator process would find it).
`verilator_config
public_flat_rw -module "chip_harness" -var "*"
public_flat_rw -module "ext_mem" -var "mem"
public_flat_rw -module "sram" -var "mem"
`endif
