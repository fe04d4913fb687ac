`default_nettype none
`include "chip_defs.vh"
// chip_harness: the cocotb toplevel of the whole chip: chip_top wired to ext_mem.
//
// A test backdoor-loads the external memory (u_mem.mem[i], 32-bit words), pulses start for one
// cycle, awaits done, then reads the counters bus (chip_defs.vh) and the memory. The
// memory port is also brought out, for monitors. The SRAM array is u_chip.u_sram.mem[i]
// (reached from Verilog, replay_tb.v; not public to cocotb on Verilator: no test reads it).
//
// With `CHIP_HARNESS_CLOCK defined (the cocotb builds of verif/launch.py), the harness makes its
// own clock, a 10 ns period (verif/chip_bfm.py's CLOCK_NS), and clk is an internal register, not
// a port: no cocotb callback per clock edge. HDL_CLOCK tells a testbench which way it was built.
// Without the define (replay_tb.v, the smoke test), clk is an input driven from outside.
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

// HDL_CLOCK is for the testbench (verif/chip_bfm.py's hdl_clock), not for the HDL
wire unused_hdl_clock = HDL_CLOCK;

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
// What cocotb reaches through VPI (verif/chip_bfm.py, chip_monitor.py), so that a build can drop
// cocotb's global --public-flat-rw, which keeps every signal of the chip and slows the model.
// Waveforms do not depend on this: --trace records every signal either way.
// "*" on chip_harness covers its ports: status, the counters bus, the memory port, and the
// HDL_CLOCK localparam; nothing inside the chip is needed.
`verilator_config
public_flat_rw -module "chip_harness" -var "*"
public_flat_rw -module "ext_mem" -var "mem"
`endif
