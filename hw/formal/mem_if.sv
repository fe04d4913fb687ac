`include "axi4_rules.vh"
`default_nettype none
// Formal properties of mem_if (hw/rtl/mem_if.v), the chip's AXI4 manager, against a subordinate
// that is free in every way (any ready pattern, any latency, any data, any response) but the
// subordinate's AXI4 obligations (axi4_rules.vh, SUBORDINATE = 0: assumed), and units held only
// to the contract of mem_if.v's header (lengths 1 .. 65535, inputs held through a stall, a write
// stream's words pushed after its command, a fence with the last push). Every manager rule of
// axi4_rules.vh is asserted, and here: completions in order (a symbolic word followed from its R
// beat to rd_valid, and from its push to its W beat), an error response reaching the unit as
// bus_err, bready always 1, rready exactly while the read buffer has room, and a fence done only
// when every write burst has had its one B.
// Checked at EXT_LAT = 1, READS_MAX = 3 (the least EXT_LAT allows), RBUF = WBUF = 2: the chip's
// values lengthen the pipelines and buffers, not the logic (verif/formal/plan.py, `narrowed`).
module mem_if_fv #(
    parameter EXT_LAT   = 1,
    parameter READS_MAX = 3,
    parameter RBUF      = 2,
    parameter WBUF      = 2
) (
    input wire        clk,
    input wire        rst,
    input wire        clear,
    // unit side
    input wire        rd_cmd,
    input wire [15:0] rd_addr,
    input wire [15:0] rd_len,
    input wire        wr_cmd,
    input wire [15:0] wr_addr,
    input wire [15:0] wr_len,
    input wire        wr_push,
    input wire [31:0] wr_data,
    input wire        fence,
    // the subordinate
    input wire        arready,
    input wire [0:0]  rid,
    input wire [31:0] rdata,
    input wire [1:0]  rresp,
    input wire        rlast,
    input wire        rvalid,
    input wire        awready,
    input wire        wready,
    input wire [0:0]  bid,
    input wire [1:0]  bresp,
    input wire        bvalid
);

mem_if #(
    .EXT_LAT   (EXT_LAT),
    .READS_MAX (READS_MAX),
    .RBUF      (RBUF),
    .WBUF      (WBUF)
) dut (
    .clk           (clk),
    .rst           (rst),
    .clear         (clear),
    .stall         (),
    .bus_err       (),
    .rd_cmd        (rd_cmd),
    .rd_addr       (rd_addr),
    .rd_len        (rd_len),
    .rd_valid      (),
    .rd_data       (),
    .wr_cmd        (wr_cmd),
    .wr_addr       (wr_addr),
    .wr_len        (wr_len),
    .wr_push       (wr_push),
    .wr_data       (wr_data),
    .fence         (fence),
    .fence_done    (),
    .m_axi_arid    (),
    .m_axi_araddr  (),
    .m_axi_arlen   (),
    .m_axi_arsize  (),
    .m_axi_arburst (),
    .m_axi_arvalid (),
    .m_axi_arready (arready),
    .m_axi_rid     (rid),
    .m_axi_rdata   (rdata),
    .m_axi_rresp   (rresp),
    .m_axi_rlast   (rlast),
    .m_axi_rvalid  (rvalid),
    .m_axi_rready  (),
    .m_axi_awid    (),
    .m_axi_awaddr  (),
    .m_axi_awlen   (),
    .m_axi_awsize  (),
    .m_axi_awburst (),
    .m_axi_awvalid (),
    .m_axi_awready (awready),
    .m_axi_wdata   (),
    .m_axi_wstrb   (),
    .m_axi_wlast   (),
    .m_axi_wvalid  (),
    .m_axi_wready  (wready),
    .m_axi_bid     (bid),
    .m_axi_bresp   (bresp),
    .m_axi_bvalid  (bvalid),
    .m_axi_bready  ()
);

endmodule

// the properties, on every port of the unit; their tracking state and the AXI4 rules'
// bookkeeping go out to the invariants (mem_if_invariants.vh, inside mem_if)
module mem_if_props #(
    parameter READS_MAX = 3,
    parameter RBUF      = 2
) (
    input wire        clk,
    input wire        rst,
    input wire        clear,
    // unit side
    input wire        stall,
    input wire        bus_err,
    input wire        rd_cmd,
    input wire [15:0] rd_addr,
    input wire [15:0] rd_len,
    input wire        rd_valid,
    input wire [31:0] rd_data,
    input wire        wr_cmd,
    input wire [15:0] wr_addr,
    input wire [15:0] wr_len,
    input wire        wr_push,
    input wire [31:0] wr_data,
    input wire        fence,
    input wire        fence_done,
    // the port
    input wire [0:0]  arid,
    input wire [31:0] araddr,
    input wire [7:0]  arlen,
    input wire [2:0]  arsize,
    input wire [1:0]  arburst,
    input wire        arvalid,
    input wire        arready,
    input wire [0:0]  rid,
    input wire [31:0] rdata,
    input wire [1:0]  rresp,
    input wire        rlast,
    input wire        rvalid,
    input wire        rready,
    input wire [0:0]  awid,
    input wire [31:0] awaddr,
    input wire [7:0]  awlen,
    input wire [2:0]  awsize,
    input wire [1:0]  awburst,
    input wire        awvalid,
    input wire        awready,
    input wire [31:0] wdata,
    input wire [3:0]  wstrb,
    input wire        wlast,
    input wire        wvalid,
    input wire        wready,
    input wire [0:0]  bid,
    input wire [1:0]  bresp,
    input wire        bvalid,
    input wire        bready,
    // the tracking state (below) and the rules' bookkeeping (axi4_rules.vh)
    output reg        f_past_valid = 1'b0,
    output reg  [7:0] r_beats,           // R beats taken
    output reg  [7:0] rd_words,          // words delivered
    output reg  [7:0] pushes,            // words pushed
    output reg  [7:0] w_beats,           // W beats sent
    output wire [7:0] f_n,               // the symbolic word followed
    output reg [31:0] f_rdata,           // .. its R beat's data, once taken
    output reg        f_rdata_in,
    output reg [31:0] f_wdata,           // .. its push's data, once pushed
    output reg        f_wdata_in,
    output wire [8:0] reads_out,
    output wire [8:0] writes_open,
    output wire [31:0] aw_pending,       // 4 bursts (the rules' BURSTS)
    output wire [35:0] w_pending,
    output wire [8:0] aw_pending_n,
    output wire [8:0] w_pending_n,
    output wire [8:0] w_beat_n,
    output wire [8:0] wlast_n,
    output wire       books_ok
);

wire [15:0] cycle;

axi4_rules #(
    .READS_MAX   (READS_MAX),
    .SUBORDINATE (0)
) u_rules (
    .clk         (clk),
    .rst         (rst),
    .arid        (arid),
    .araddr      (araddr),
    .arlen       (arlen),
    .arsize      (arsize),
    .arburst     (arburst),
    .arvalid     (arvalid),
    .arready     (arready),
    .rid         (rid),
    .rdata       (rdata),
    .rresp       (rresp),
    .rlast       (rlast),
    .rvalid      (rvalid),
    .rready      (rready),
    .awid        (awid),
    .awaddr      (awaddr),
    .awlen       (awlen),
    .awsize      (awsize),
    .awburst     (awburst),
    .awvalid     (awvalid),
    .awready     (awready),
    .wdata       (wdata),
    .wstrb       (wstrb),
    .wlast       (wlast),
    .wvalid      (wvalid),
    .wready      (wready),
    .bid         (bid),
    .bresp       (bresp),
    .bvalid      (bvalid),
    .bready      (bready),
    .cycle       (cycle),
    .reads_out   (reads_out),
    .writes_open (writes_open),
    .aw_pending  (aw_pending),
    .w_pending   (w_pending),
    .aw_pending_n (aw_pending_n),
    .w_pending_n (w_pending_n),
    .w_beat_n    (w_beat_n),
    .wlast_n     (wlast_n),
    .books_ok    (books_ok)
);

// ---------------------------------------------------------------------------------------------
// the unit side's contract (mem_if.v's header): assumed

always @(posedge clk) f_past_valid <= 1'b1;

wire        advance = !stall;
wire        rd_take = rd_cmd && advance;
wire        wr_take = wr_cmd && advance;
wire        push    = wr_push && advance;
reg  [23:0] w_owed;    // words of the write streams commanded and not yet pushed
wire [23:0] w_owed_now = w_owed + (wr_cmd ? {8'd0, wr_len} : 24'd0);

always @(posedge clk) begin
    if (rst) begin
        w_owed <= 24'd0;
    end else begin
        w_owed <= w_owed + (wr_take ? {8'd0, wr_len} : 24'd0) - {23'd0, push};
    end
end

always @(*) begin
    // reset in the first cycle, and only then
    RESET_FIRST: assume (rst == !f_past_valid);
    // streams of 1 .. 65535 words
    if (rd_cmd) RD_LEN: assume (rd_len != 16'd0);
    if (wr_cmd) WR_LEN: assume (wr_len != 16'd0);
    // a word pushed belongs to a stream commanded (the first push may be in its command's cycle)
    if (wr_push) PUSH_OWED: assume (w_owed_now != 24'd0);
    // a fence comes with a stream's last push
    if (fence) FENCE_LAST: assume (wr_push && w_owed_now == 24'd1);
end

// a frozen cycle takes no input: the units present the same ones again
always @(posedge clk) begin
    if (f_past_valid && !$past(rst) && $past(stall)) begin
        UNIT_HOLDS: assume ({rd_cmd, rd_addr, rd_len, wr_cmd, wr_addr, wr_len, wr_push, wr_data,
                             fence} == $past({rd_cmd, rd_addr, rd_len, wr_cmd, wr_addr, wr_len,
                                              wr_push, wr_data, fence}));
    end
end

// ---------------------------------------------------------------------------------------------
// words followed through the port: a symbolic word f_n of the R beats (to rd_valid) and of the
// pushes (to W)

(* anyconst *) reg [7:0] f_n_reg;
assign f_n = f_n_reg;

wire        r_fire  = rvalid && rready;
wire        w_fire  = wvalid && wready;

always @(posedge clk) begin
    if (rst) begin
        r_beats      <= 8'd0;
        rd_words     <= 8'd0;
        pushes       <= 8'd0;
        w_beats      <= 8'd0;
        f_rdata_in   <= 1'b0;
        f_wdata_in   <= 1'b0;
    end else begin
        r_beats  <= r_beats + {7'd0, r_fire};
        rd_words <= rd_words + {7'd0, rd_valid};
        pushes   <= pushes + {7'd0, push};
        w_beats  <= w_beats + {7'd0, w_fire};
        if (r_fire && r_beats == f_n) begin
            f_rdata    <= rresp[1] ? 32'd0 : rdata;    // an error beat carries 0
            f_rdata_in <= 1'b1;
        end
        if (push && pushes == f_n) begin
            f_wdata    <= wr_data;
            f_wdata_in <= 1'b1;
        end
    end
end

// ---------------------------------------------------------------------------------------------
// mem_if's own promises: asserted

wire err_resp = (r_fire && rresp[1]) || (bvalid && bready && bresp[1]);    // SLVERR or DECERR
wire [7:0] buffered = r_beats - rd_words;

always @(posedge clk) begin
    if (!rst) begin
        // in-order completion: the f_n-th word delivered is the f_n-th R beat's data
        if (rd_valid && rd_words == f_n) MEM_RD_ORDER: assert (f_rdata_in && rd_data == f_rdata);
        // in-order writes: the f_n-th W beat carries the f_n-th word pushed
        if (w_fire && w_beats == f_n) MEM_W_ORDER: assert (f_wdata_in && wdata == f_wdata);
        // bready always 1 (mem_if.v's header)
        MEM_BREADY: assert (bready);
        // rready exactly while the read buffer has room
        MEM_RREADY: assert (rready == (buffered != RBUF[7:0]));
        // a fence is done only when every write burst has had its one B
        if (fence_done) MEM_FENCE_B: assert (writes_open == 9'd0 && !awvalid && !wvalid);
    end
    if (f_past_valid && !$past(rst) && !rst) begin
        // an R beat or a B with SLVERR or DECERR reaches the unit as bus_err (unless a run
        // starts in that cycle) ..
        if ($past(err_resp) && !$past(clear)) MEM_BUS_ERR: assert (bus_err);
        // .. and nothing else raises it; it holds until a run starts
        if (bus_err) MEM_BUS_ERR_CAUSE: assert ($past(err_resp) ||
                                                ($past(bus_err) && !$past(clear)));
    end
end

// the preconditions are reachable
always @(posedge clk) begin
    if (!rst) begin
        RD_ORDERED: cover (rd_valid && rd_words == f_n && f_n == 8'd2 && rd_data != 32'd0);
        W_ORDERED: cover (w_fire && w_beats == f_n && f_n == 8'd2);
        RREADY_LOW: cover (!rready);
        FENCE_DONE: cover (fence_done);
        R_ERROR: cover (r_fire && rresp == 2'b10);
        B_ERROR: cover (bvalid && bresp == 2'b11);
    end
    if (f_past_valid && !$past(rst) && !rst) begin
        BUS_ERR_RAISED: cover (bus_err && !$past(bus_err));
    end
end

endmodule

`default_nettype wire
