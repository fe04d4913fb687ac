`default_nettype none
`include "chip_defs.vh"
// chip_harness: the cocotb toplevel of the whole chip: chip_top's AXI4 port wired to axi_ram
// (the external memory, its profile set per run by plusargs: axi_ram.v), with axi_checker on
// the port in every run.
//
// A test backdoor-loads the external memory (u_mem.mem[i], 32-bit words), pulses start for one
// cycle, awaits done, then reads the counters bus (chip_defs.vh) and the memory. The words
// written are also brought out (mem_req = mem_we high for each W beat accepted, with its word
// address and data), for monitors; so are the protocol checker's verdict (axi_violations: 0
// when the port kept every rule; else the first one's cycle, channel and rule,
// model.chip.rtl_defs.AxiChannel and AxiRule) and the delays the memory inserted (mem_stalls:
// axi_ram.v's stall_counts). The SRAM array is u_chip.u_sram.mem[i] (cleared when a test
// starts, verif/kit/bfm.py's power_up: with CHIP_HARNESS_RECORD by the harness, sram_clear).
//
// With `CHIP_HARNESS_CLOCK defined (the cocotb builds of verif/runs/launch.py), the harness makes
// its own clock, a 10 ns period (verif/kit/bfm.py's CLOCK_NS), and clk is an internal register, not
// a port: no cocotb callback per clock edge. HDL_CLOCK tells a testbench which way it was built.
// Without the define (replay_tb.v, the smoke test), clk is an input driven from outside.
//
// With `CHIP_HARNESS_RECORD defined (the cocotb builds of verif/runs/launch.py, not replay_tb.v),
// the harness also keeps, for the testbench to read after done instead of a Python callback
// per cycle (verif/agents/chip/write_monitor.py, verif/kit/bfm.py, verif/scoreboard/locate.py),
// three logs (hw/tb/event_log.v rings), each entry stamped with the run's cycle (counted with
// and without the cycles frozen on memory) and the controller's pc:
//   * u_wlog: every W beat the memory accepts, read after every run (the write monitor);
//   * u_slog: every scratchpad write, and u_ilog: the start of each instruction's FETCH and
//     CHECK, read only when a run failed, to place the first wrong write and the first
//     instruction whose cycles differ from the reference machine's;
//   * a cycle watchdog: watchdog_limit (set by the testbench before start) cycles after start,
//     while done is low, watchdog_expired rises; start clears it. The hang_* signals and the
//     last address handshake on the port (last_*) say what a hung run was doing.
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

    // the words written to external memory, observed (one per W beat accepted)
    output wire        mem_req,
    output wire        mem_we,
    output wire [15:0] mem_addr,
    output wire [31:0] mem_wdata,

    // the protocol checker's verdict and the memory's inserted delays, read after done
    output wire [31:0] axi_violations,
    output wire [31:0] axi_first_cycle,
    output wire [2:0]  axi_first_channel,
    output wire [3:0]  axi_first_rule,
    output wire [6*32-1:0] mem_stalls
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
localparam WLOG_WORDS = 1024;     // external writes kept: the most one run may make (monitor checks)
localparam SLOG_WORDS = 16384;    // scratchpad writes kept: read only to locate a failure
localparam ILOG_WORDS = 4096;     // instruction phases kept (two an instruction)
localparam SRAM_AW    = $clog2(SRAM_WORDS);

// The cycles of the run so far: bus_cycle counts every cycle from the first FETCH cycle (0),
// run_cycle only those the chip was not frozen on memory, so it follows the ideal memory's
// schedule, the reference machine's (model.chip.machine's trace): a stall leaves it unchanged.
// Both live in one register, the logs' stamp, so that it changes once a cycle as a whole.
reg  [63:0] stamp;    // {bus_cycle, run_cycle}: when, in both counts
wire [31:0] bus_cycle = stamp[63:32];
wire [31:0] run_cycle = stamp[31:0];
always @(posedge clk) begin
    if (rst || start) begin
        stamp <= 64'd0;
    end else begin
        stamp <= {bus_cycle + 32'd1, run_cycle + {31'd0, !u_chip.mem_stall}};
    end
end

wire [15:0] pc_now = u_chip.u_controller.pc_reg[15:0];
wire [31:0] wlog_count, slog_count, ilog_count;    // each log's events since reset

// Every W beat the memory accepts (exactly: an X or Z handshake writes nothing), logged at the
// rising edge that ends its cycle (the edge axi_ram.v stores it at):
// {bus_cycle, run_cycle, pc, word address, data}.
event_log #(
    .STAMP_W (64),
    .DATA_W  (64),
    .DEPTH   (WLOG_WORDS)
) u_wlog (
    .clk   (clk),
    .rst   (rst),
    .valid (w_event),
    .stamp (stamp),
    .data  ({pc_now, mem_addr, mem_wdata}),
    .count (wlog_count)
);

// Every scratchpad write: {bus_cycle, run_cycle, pc, word address, data}.
event_log #(
    .STAMP_W (64),
    .DATA_W  (64),
    .DEPTH   (SLOG_WORDS)
) u_slog (
    .clk   (clk),
    .rst   (rst),
    .valid (u_chip.sram_wr_en),
    .stamp (stamp),
    .data  ({pc_now, {{(16 - SRAM_AW){1'b0}}, u_chip.sram_wr_addr}, u_chip.sram_wr_data}),
    .count (slog_count)
);

// The first cycle of each instruction's FETCH (phase 0) and its CHECK (phase 1), not frozen:
// {bus_cycle, run_cycle, phase, pc}.
wire [`CTL_STATE_W-1:0] ctl_state = u_chip.u_controller.state_reg;
wire fetch_starts = ctl_state == `CTL_FETCH && u_chip.u_controller.fcnt_reg == 3'd0;
wire checking     = ctl_state == `CTL_CHECK;
event_log #(
    .STAMP_W (64),
    .DATA_W  (17),
    .DEPTH   (ILOG_WORDS)
) u_ilog (
    .clk   (clk),
    .rst   (rst),
    .valid ((fetch_starts || checking) && !u_chip.mem_stall),
    .stamp (stamp),
    .data  ({checking, pc_now}),
    .count (ilog_count)
);

// What a hung run was doing, read when the watchdog fires (verif/kit/bfm.py's ChipHung):
// the controller's pc and state, the units selected, the last address handshake on the port.
wire [15:0] hang_pc    = pc_now;
wire [`CTL_STATE_W-1:0] hang_state = ctl_state;
wire [4:0]  hang_units = {u_chip.sel_dma, u_chip.sel_pdma, u_chip.sel_mat, u_chip.sel_vec,
                          u_chip.sel_sm};
reg         last_write;      // the last address handshake was AW (else AR)
reg  [31:0] last_addr;       // its byte address
reg  [7:0]  last_len;        // its beats - 1
reg  [31:0] last_cycle;      // its bus_cycle
reg         last_done;       // its last R beat, or its B response, was accepted
always @(posedge clk) begin
    if (rst) begin
        last_write <= 1'b0;
        last_addr  <= 32'd0;
        last_len   <= 8'd0;
        last_cycle <= 32'd0;
        last_done  <= 1'b1;
    end else if (arvalid && arready) begin
        {last_write, last_addr, last_len, last_cycle, last_done} <=
            {1'b0, araddr, arlen, bus_cycle, 1'b0};
    end else if (awvalid && awready) begin
        {last_write, last_addr, last_len, last_cycle, last_done} <=
            {1'b1, awaddr, awlen, bus_cycle, 1'b0};
    end else if ((!last_write && rvalid && rready && rlast) ||
                 (last_write && bvalid && bready)) begin
        last_done <= 1'b1;
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

// The testbench's clear of the scratchpad (verif/kit/bfm.py's power_up): the tests that share a
// simulator process each start from a zero scratchpad, as a new process finds it (sram.v keeps
// its words through reset). At each rising edge while sram_clear is high, every word becomes 0:
// one signal set, where 4,096 words written through VPI cost milliseconds of Python a test.
reg     sram_clear;
integer sram_word;
initial sram_clear = 1'b0;
always @(posedge clk) begin
    if (sram_clear) begin
        for (sram_word = 0; sram_word < SRAM_WORDS; sram_word = sram_word + 1) begin
            u_chip.u_sram.mem[sram_word] <= 32'd0;
`ifndef FAULT_DETECTION_OFF
            u_chip.u_sram.g_parity.par[sram_word] <= 1'b0;    // a zero word's parity
`endif
        end
    end
end
`else
localparam [0:0] HDL_RECORD = 1'b0;
`endif

wire unused_hdl_record = HDL_RECORD;

wire [0:0]  arid, rid, awid, bid;
wire [31:0] araddr, rdata, awaddr, wdata;
wire [7:0]  arlen, awlen;
wire [2:0]  arsize, awsize;
wire [1:0]  arburst, rresp, awburst, bresp;
wire [3:0]  wstrb;
wire        arvalid, arready, rlast, rvalid, rready, awvalid, awready;
wire        wlast, wvalid, wready, bvalid, bready;

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
    .m_axi_arid    (arid),
    .m_axi_araddr  (araddr),
    .m_axi_arlen   (arlen),
    .m_axi_arsize  (arsize),
    .m_axi_arburst (arburst),
    .m_axi_arvalid (arvalid),
    .m_axi_arready (arready),
    .m_axi_rid     (rid),
    .m_axi_rdata   (rdata),
    .m_axi_rresp   (rresp),
    .m_axi_rlast   (rlast),
    .m_axi_rvalid  (rvalid),
    .m_axi_rready  (rready),
    .m_axi_awid    (awid),
    .m_axi_awaddr  (awaddr),
    .m_axi_awlen   (awlen),
    .m_axi_awsize  (awsize),
    .m_axi_awburst (awburst),
    .m_axi_awvalid (awvalid),
    .m_axi_awready (awready),
    .m_axi_wdata   (wdata),
    .m_axi_wstrb   (wstrb),
    .m_axi_wlast   (wlast),
    .m_axi_wvalid  (wvalid),
    .m_axi_wready  (wready),
    .m_axi_bid     (bid),
    .m_axi_bresp   (bresp),
    .m_axi_bvalid  (bvalid),
    .m_axi_bready  (bready),
    .counters   (counters)
);

wire w_event;

axi_ram #(
    .WORDS (EXT_WORDS),
    .LAT   (EXT_LAT)
) u_mem (
    .clk           (clk),
    .rst           (rst),
    .s_axi_arid    (arid),
    .s_axi_araddr  (araddr),
    .s_axi_arlen   (arlen),
    .s_axi_arsize  (arsize),
    .s_axi_arburst (arburst),
    .s_axi_arvalid (arvalid),
    .s_axi_arready (arready),
    .s_axi_rid     (rid),
    .s_axi_rdata   (rdata),
    .s_axi_rresp   (rresp),
    .s_axi_rlast   (rlast),
    .s_axi_rvalid  (rvalid),
    .s_axi_rready  (rready),
    .s_axi_awid    (awid),
    .s_axi_awaddr  (awaddr),
    .s_axi_awlen   (awlen),
    .s_axi_awsize  (awsize),
    .s_axi_awburst (awburst),
    .s_axi_awvalid (awvalid),
    .s_axi_awready (awready),
    .s_axi_wdata   (wdata),
    .s_axi_wstrb   (wstrb),
    .s_axi_wlast   (wlast),
    .s_axi_wvalid  (wvalid),
    .s_axi_wready  (wready),
    .s_axi_bid     (bid),
    .s_axi_bresp   (bresp),
    .s_axi_bvalid  (bvalid),
    .s_axi_bready  (bready),
    .w_event       (w_event),
    .w_event_addr  (mem_addr),
    .w_event_data  (mem_wdata),
    .stall_counts  (mem_stalls)
);

assign mem_req    = w_event;
assign mem_we     = w_event;

axi_checker u_axi_checker (
    .clk           (clk),
    .rst           (rst),
    .arid          (arid),
    .araddr        (araddr),
    .arlen         (arlen),
    .arsize        (arsize),
    .arburst       (arburst),
    .arvalid       (arvalid),
    .arready       (arready),
    .rid           (rid),
    .rdata         (rdata),
    .rresp         (rresp),
    .rlast         (rlast),
    .rvalid        (rvalid),
    .rready        (rready),
    .awid          (awid),
    .awaddr        (awaddr),
    .awlen         (awlen),
    .awsize        (awsize),
    .awburst       (awburst),
    .awvalid       (awvalid),
    .awready       (awready),
    .wdata         (wdata),
    .wstrb         (wstrb),
    .wlast         (wlast),
    .wvalid        (wvalid),
    .wready        (wready),
    .bid           (bid),
    .bresp         (bresp),
    .bvalid        (bvalid),
    .bready        (bready),
    .first_cycle   (axi_first_cycle),
    .first_channel (axi_first_channel),
    .first_rule    (axi_first_rule),
    .violations    (axi_violations)
);

endmodule

`default_nettype wire

`ifdef VERILATOR
// What cocotb reaches through VPI (verif/kit/bfm.py, verif/agents/chip/monitor.py), so that a
// build can drop cocotb's global --public-flat-rw, which keeps every signal of the chip and slows the model.
// Waveforms do not depend on this: --trace records every signal either way.
// "*" on chip_harness covers its ports, its localparams (HDL_CLOCK, HDL_RECORD) and its own
// signals (sram_clear, the watchdog, the logs' counts); inside the chip, only the scratchpad's
// array (the testbench's backdoor reads it); in the memory, its array, its bulk backdoor's two
// counters (verif/kit/file_load.py) and the profile the bandwidth benchmark sets between its
// points (verif/tests/bandwidth_cocotb.py).
`verilator_config
public_flat_rw -module "chip_harness" -var "*"
public_flat_rw -module "axi_ram" -var "mem"
public_flat_rw -module "axi_ram" -var "backdoor_*"
public_flat_rw -module "axi_ram" -var "seed"
public_flat_rw -module "axi_ram" -var "lat_*"
public_flat_rw -module "axi_ram" -var "low_*"
public_flat_rw -module "sram" -var "mem"
`endif
